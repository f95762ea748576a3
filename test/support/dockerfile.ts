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
}

/** Joins continuation lines, drops comments, and splits the file into its build stages. */
function instructions(text: string): string[][] {
  const lines = text.replace(/\\\n/g, ' ').split('\n').map((line) => line.trim());
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

/** Only the exec (JSON array) forms of ENTRYPOINT and CMD: the shell form would hide signals. */
export function readImageStages(path: string): ImageStage[] {
  return instructions(readFileSync(path, 'utf8')).map((stage) => {
    const image: ImageStage = { from: '', workdir: '/', user: 'root', env: {}, entrypoint: [], cmd: [], run: '' };
    for (const line of stage) {
      const [, keyword = '', rest = ''] = /^(\S+)\s+(.*)$/.exec(line) ?? [];
      switch (keyword.toUpperCase()) {
        case 'FROM': image.from = rest.split(/\s+/)[0]!; break;
        case 'WORKDIR': image.workdir = rest; break;
        case 'USER': image.user = rest; break;
        case 'ENV': parseEnv(rest, image.env); break;
        case 'ENTRYPOINT': image.entrypoint = JSON.parse(rest); break;
        case 'CMD': image.cmd = JSON.parse(rest); break;
        case 'RUN': image.run += `${rest}\n`; break;
        default: break;
      }
    }
    return image;
  });
}
