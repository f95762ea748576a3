import { once } from 'node:events';
import { connect, createServer } from 'node:net';
import type { Server } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EgressProxy } from '../src/web/browser-egress.ts';
import { BrowserSessions } from '../src/web/browser-sessions.ts';
import { Allowlist } from '../src/web/ssrf.ts';
import { createBrowserTools } from '../src/web/browser-tools.ts';
import type { Tool } from '../src/shared/tool.ts';
import { startFakeHttp } from '../../../test/support/fake-http.ts';
import type { FakeHttpServer } from '../../../test/support/fake-http.ts';
import { offlineContext } from './call-context.ts';

/**
 * Where the browser's traffic may go once the first URL passed: redirects, WebSockets and the
 * address a name resolves to are held to web_extract's SSRF rules as well. 127.0.0.1 is
 * allowlisted for the test; 127.0.0.2 is a private address nothing may reach.
 */

let site: FakeHttpServer;
let inside: FakeHttpServer;
/** A bare TCP listener on the private address: counts every connection, whatever it speaks. */
let insideWs: Server;
let insideWsConnections = 0;
let sessions: BrowserSessions;
let tools: Map<string, Tool>;
let base: string;

// Chromium cannot resolve these names itself: only Herald's lookup knows them.
const names: Record<string, string> = { 'site.test': '127.0.0.1', 'inside.test': '127.0.0.2' };
const lookup = (hostname: string) => {
  const address = names[hostname];
  return address === undefined ? Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' })) : Promise.resolve([{ address, family: 4 }]);
};

/** One SOCKS5 CONNECT (or another command) as a client speaks it; the reply code, and the socket to use. */
async function socks(proxy: EgressProxy, command: number, address: Buffer, port: number) {
  const socket = connect(Number(new URL(proxy.server).port), '127.0.0.1');
  socket.write(Buffer.from([5, 1, 0]));
  expect([...((await once(socket, 'data')) as [Buffer])[0]]).toEqual([5, 0]);
  const portBytes = Buffer.alloc(2);
  portBytes.writeUInt16BE(port);
  socket.write(Buffer.concat([Buffer.from([5, command, 0]), address, portBytes]));
  const [answer] = (await once(socket, 'data')) as [Buffer];
  return { code: answer[1], socket };
}
const ipv4 = (text: string) => Buffer.from([1, ...text.split('.').map(Number)]);
const ipv6 = (groups: number[]) => Buffer.concat([Buffer.from([4]), Buffer.from(groups.flatMap((g) => [g >> 8, g & 255]))]);
const named = (name: string) => Buffer.concat([Buffer.from([3, name.length]), Buffer.from(name)]);

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'herald-egress-'));
  inside = await startFakeHttp((_request, response) => response.end('<!doctype html><title>Secret</title><p>classified</p>'), { host: '127.0.0.2' });
  insideWs = createServer((socket) => {
    insideWsConnections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => insideWs.listen(0, '127.0.0.2', resolve));
  const wsPort = (insideWs.address() as { port: number }).port;
  site = await startFakeHttp((request, response) => {
    if (request.path === '/hop') return response.writeHead(302, { location: `${inside.origin}/secret` }).end();
    if (request.path === '/hop-named') return response.writeHead(302, { location: `http://inside.test:${inside.port}/secret` }).end();
    response.setHeader('content-type', 'text/html');
    if (request.path === '/socket') {
      return response.end(`<!doctype html><title>Socket</title><script>
        const ws = new WebSocket('ws://127.0.0.2:${wsPort}/');
        ws.onopen = () => (document.title = 'open');
        ws.onclose = () => (document.title = 'closed');
      </script>`);
    }
    return response.end('<!doctype html><title>Public</title><p>hello</p>');
  });
  sessions = new BrowserSessions({ chromiumPath: '/usr/bin/chromium', idleMs: 60_000, allowlist: ['127.0.0.1'], lookup });
  tools = new Map(createBrowserTools(sessions).map((tool) => [tool.name, tool]));
});
afterAll(async () => {
  await sessions.closeAll();
  await Promise.all([site.close(), inside.close(), new Promise((resolve) => insideWs.close(resolve))]);
  await rm(base, { recursive: true, force: true });
});

const call = (name: string, args: unknown, sessionId: string) => {
  const tool = tools.get(name)!;
  return tool.execute(tool.schema.parse(args), offlineContext({ sessionId, workspaceDir: join(base, sessionId) }));
};

describe('browser egress (every connection held to the SSRF rules)', () => {
  it('refuses a redirect from an allowed page to a private address, and never loads the private page', async () => {
    await expect(call('browser_navigate', { url: `${site.origin}/hop` }, 'r1')).rejects.toThrow(/refused: .*127\.0\.0\.2.*loopback, private/);
    await expect(call('browser_navigate', { url: `${site.origin}/hop-named` }, 'r1')).rejects.toThrow(/refused: .*inside\.test.*127\.0\.0\.2/);
    expect(await call('browser_snapshot', {}, 'r1')).not.toContain('classified');
    expect(inside.requests).toEqual([]);
    expect(site.requests.filter((r) => r.path.startsWith('/hop'))).toHaveLength(2);
  }, 60_000);

  it('refuses a WebSocket to a private address', async () => {
    await call('browser_navigate', { url: `${site.origin}/socket` }, 'w1');
    let title = '';
    for (let i = 0; i < 50 && !/Title: (open|closed)/.test(title); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      title = await call('browser_snapshot', {}, 'w1');
    }
    expect(title).toContain('Title: closed');
    expect(insideWsConnections).toBe(0);
  }, 60_000);

  it("connects to the address Herald's lookup checked: a name only that lookup knows loads, a private one is refused", async () => {
    const loaded = await call('browser_navigate', { url: `http://site.test:${site.port}/` }, 'n1');
    expect(loaded).toContain('Title: Public');
    await expect(call('browser_navigate', { url: `http://inside.test:${inside.port}/` }, 'n1')).rejects.toThrow(/refused: .*127\.0\.0\.2/);
    expect(inside.requests).toEqual([]);
  }, 60_000);

  it('the proxy on the wire: checks IPv4, IPv6 and named destinations, relays an allowed one, refuses other commands', async () => {
    const proxy = await EgressProxy.start(new Allowlist(['127.0.0.1']), lookup);
    try {
      const refusedCodes = [
        (await socks(proxy, 1, ipv6([0, 0, 0, 0, 0, 0, 0, 1]), inside.port)).code, // ::1
        (await socks(proxy, 1, ipv6([0, 0, 0, 0, 0, 0xffff, 0x7f00, 2]), inside.port)).code, // ::ffff:127.0.0.2
        (await socks(proxy, 1, named('inside.test'), inside.port)).code,
        (await socks(proxy, 1, ipv4('127.0.0.2'), inside.port)).code,
      ];
      expect(refusedCodes).toEqual([2, 2, 2, 2]);
      expect(proxy.takeRefusals()).toHaveLength(4);
      expect((await socks(proxy, 2, ipv4('127.0.0.1'), site.port)).code).toBe(7); // BIND: not offered
      const { code, socket } = await socks(proxy, 1, named('site.test'), site.port);
      expect(code).toBe(0);
      socket.end(`GET / HTTP/1.1\r\nhost: site.test\r\nconnection: close\r\n\r\n`);
      let text = '';
      for await (const chunk of socket) text += String(chunk);
      expect(text).toMatch(/^HTTP\/1\.1 200[\s\S]*Title/i);
      expect(inside.requests).toEqual([]);
    } finally {
      await proxy.close();
    }
  });
});
