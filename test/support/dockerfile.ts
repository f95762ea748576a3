import { readFileSync } from 'node:fs';

/** What the image's last stage declares: enough to run its start command outside a container. */
export interface ImageStage {
  from: string;
  workdir: string;
  user: string;
  env: Record<string, string>;
  entrypoint: string[];
  cmd: string[];
  run: string;
  /** What its COPY lines take from the build context (not from another stage), as written. */
  copied: string[];
}

/** Joins continuation lines, drops comments, and splits the file into its build stages. */
function instructions(text: string): string[][] {
  const lines = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim());
  const stages: string[][] = [];
  for (const line of lines) {
    if (line === '' || line.startsWith('#')) continue;
    if (/^FROM\s/i.test(line)) stages.push([]);
    stages.at(-1)?.push(line);
  }
  return stages;
}

function parseEnv(rest: string, into: Record<string, string>): void {
  for (const match of rest.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S+)/g)) {
    into[match[1]!] = match[2]!.replace(/^"|"$/g, '');
  }
}

/** The sources of a COPY from the build context: every word but the flags and the destination. */
function copySources(rest: string): string[] {
  const words = rest.split(/\s+/);
  if (words.some((word) => word.startsWith('--from='))) return [];
  return words.filter((word) => !word.startsWith('--')).slice(0, -1);
}

/** Only the exec (JSON array) forms of ENTRYPOINT and CMD: the shell form would hide signals. */
export function readImageStages(path: string): ImageStage[] {
  return instructions(readFileSync(path, 'utf8')).map((stage) => {
    const image: ImageStage = { from: '', workdir: '/', user: 'root', env: {}, entrypoint: [], cmd: [], run: '', copied: [] };
    for (const line of stage) {
      const [, keyword = '', rest = ''] = /^(\S+)\s+(.*)$/.exec(line) ?? [];
      switch (keyword.toUpperCase()) {
        case 'FROM':
          image.from = rest.split(/\s+/)[0]!;
          break;
        case 'WORKDIR':
          image.workdir = rest;
          break;
        case 'USER':
          image.user = rest;
          break;
        case 'ENV':
          parseEnv(rest, image.env);
          break;
        case 'ENTRYPOINT':
          image.entrypoint = JSON.parse(rest);
          break;
        case 'CMD':
          image.cmd = JSON.parse(rest);
          break;
        case 'RUN':
          image.run += `${rest}\n`;
          break;
        case 'COPY':
          image.copied.push(...copySources(rest));
          break;
        default:
          break;
      }
    }
    return image;
  });
}
