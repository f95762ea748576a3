import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A directory holding a hooks file and the modules it names, as an operator would lay it out. */
export function writeHooks(modules: Record<string, string>, hooksYaml: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'herald-hooks-'));
  for (const [name, source] of Object.entries(modules)) writeFileSync(join(dir, name), source);
  const path = join(dir, 'hooks.yaml');
  writeFileSync(path, hooksYaml);
  return path;
}

export interface ReceivedHook {
  headers: IncomingHttpHeaders;
  body: string;
  status: number;
}

/** A url hook receiver on loopback: answers each POST with the next status of `statuses` (then 200). */
export async function startHookReceiver(statuses: number[] = []) {
  const received: ReceivedHook[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const status = statuses.shift() ?? 200;
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), status });
      response.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
