import type { ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { htmlToText } from '../src/web/html-text.ts';
import { Allowlist, blockedReason, embeddedIPv4 } from '../src/web/ssrf.ts';
import type { CallContext, Tool } from '../src/shared/tool.ts';
import { startFakeHttp } from '../../../test/support/fake-http.ts';
import type { FakeHttpServer } from '../../../test/support/fake-http.ts';
import { offlineContext } from './call-context.ts';
import { createWebExtractTool } from '../src/web/web-extract-tool.ts';

const PAGE = `<!doctype html><html><head><title>Herald &amp; Friends</title>
<style>body { color: red }</style><script>alert("x")</script></head>
<body><nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<h1>Release notes</h1>
<p>Version&nbsp;2 is <b>out</b> &mdash; see <a href="/changes">the changelog</a>.</p>
<ul><li>faster</li><li>safer &#x2713;</li></ul>
<!-- a comment that must not show -->
</body></html>`;

/** A loopback server the tool may or may not be allowed to reach; `requests` shows whether it was. */
async function startServer(host: string, handler: (path: string, res: ServerResponse, origin: string) => unknown): Promise<FakeHttpServer> {
  const holder: { origin: string } = { origin: '' };
  const server = await startFakeHttp((request, response) => handler(request.path, response, holder.origin), { host });
  holder.origin = server.origin;
  return server;
}

let main: FakeHttpServer;
let other: FakeHttpServer;

beforeAll(async () => {
  other = await startServer('127.0.0.2', (_path, res) => res.end('you should not see this'));
  main = await startServer('127.0.0.1', (path, res, base) => {
    if (path === '/page') {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      return res.end(PAGE);
    }
    if (path === '/json') {
      res.setHeader('content-type', 'application/json');
      return res.end('{"ok":true,"items":[1,2]}');
    }
    if (path === '/big') {
      res.setHeader('content-type', 'text/plain');
      return res.end('x'.repeat(10_000));
    }
    if (path === '/gzip') {
      res.setHeader('content-type', 'text/plain');
      res.setHeader('content-encoding', 'gzip');
      return res.end(gzipSync('compressed hello'));
    }
    if (path === '/gzip-big') {
      res.setHeader('content-type', 'text/plain');
      res.setHeader('content-encoding', 'gzip');
      return res.end(gzipSync('y'.repeat(1_000_000)));
    }
    if (path === '/image') {
      res.setHeader('content-type', 'image/png');
      return res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0]));
    }
    if (path === '/to-page') {
      res.writeHead(302, { location: '/page' });
      return res.end();
    }
    if (path === '/to-other') {
      res.writeHead(302, { location: `${other.origin}/secret` });
      return res.end();
    }
    if (path === '/to-file') {
      res.writeHead(301, { location: 'file:///etc/passwd' });
      return res.end();
    }
    if (path.startsWith('/loop')) {
      res.writeHead(307, { location: `${base}/loop${path.length}` });
      return res.end();
    }
    if (path === '/hang') return; // never answers
    if (path === '/missing') {
      res.writeHead(404);
      return res.end('not here');
    }
    res.writeHead(500);
    return res.end();
  });
});

afterAll(async () => {
  await Promise.all([main.close(), other.close()]);
});

function context(): CallContext {
  return offlineContext();
}

const run = (tool: Tool, urls: string[]) => tool.execute(tool.schema.parse({ urls }), context());

describe('web_extract address checks', () => {
  const strict = createWebExtractTool();
  const allowLoopback = createWebExtractTool({ allowlist: ['127.0.0.1'] });

  it('refuses loopback without connecting', async () => {
    await expect(run(strict, [`${main.origin}/page`])).rejects.toThrow(/127\.0\.0\.1 is a loopback, private, link-local or reserved address/);
    expect(main.requests).toEqual([]);
  });

  it('refuses the host name localhost after resolving it', async () => {
    const port = new URL(main.origin).port;
    await expect(run(strict, [`http://localhost:${port}/page`])).rejects.toThrow(/refused to fetch localhost: .* loopback/);
    expect(main.requests).toEqual([]);
  });

  it('refuses IPv6 loopback and IPv4-mapped literals', async () => {
    await expect(run(strict, ['http://[::1]:9/'])).rejects.toThrow(/::1 is a loopback/);
    await expect(run(strict, ['http://[::ffff:127.0.0.1]:9/'])).rejects.toThrow(/refused to fetch ::ffff:7f00:1: /);
    await expect(run(strict, ['http://169.254.169.254/latest/meta-data/'])).rejects.toThrow(/link-local/);
  });

  it('fetches an allowlisted address and follows a redirect to it', async () => {
    const text = await run(allowLoopback, [`${main.origin}/to-page`]);
    expect(text).toContain('## Herald & Friends');
    expect(text).toContain(`[redirected to ${main.origin}/page]`);
  });

  it('allows a host the allowlist names', async () => {
    const port = new URL(main.origin).port;
    expect(await run(createWebExtractTool({ allowlist: ['localhost'] }), [`http://localhost:${port}/json`])).toContain('{"ok":true');
  });

  it('refuses a redirect from an allowlisted server to an address that is not allowlisted', async () => {
    await expect(run(allowLoopback, [`${main.origin}/to-other`])).rejects.toThrow(/127\.0\.0\.2 is a loopback/);
    expect(other.requests).toEqual([]);
    // A CIDR entry covers both.
    expect(await run(createWebExtractTool({ allowlist: ['127.0.0.0/8'] }), [`${main.origin}/to-other`])).toContain('you should not see this');
  });

  it('refuses non-http schemes, also on redirect, and redirect loops', async () => {
    await expect(run(allowLoopback, ['file:///etc/passwd'])).rejects.toThrow(/file: URLs are not fetched/);
    await expect(run(allowLoopback, [`${main.origin}/to-file`])).rejects.toThrow(/file: URLs are not fetched/);
    await expect(run(allowLoopback, [`${main.origin}/loop`])).rejects.toThrow(/more than 5 redirects/);
    await expect(run(allowLoopback, ['not a url'])).rejects.toThrow(/not a valid URL/);
  });

  it('reports each URL separately when only some fail', async () => {
    const text = await run(allowLoopback, [`${main.origin}/json`, `${main.origin}/missing`, 'http://10.0.0.1/']);
    expect(text).toContain('{"ok":true,"items":[1,2]}');
    expect(text).toContain(`## ${main.origin}/missing\nError: HTTP 404`);
    expect(text).toContain('## http://10.0.0.1/\nError: refused to fetch 10.0.0.1');
  });
});

describe('web_extract content', () => {
  const tool = createWebExtractTool({ allowlist: ['127.0.0.1'], maxBytes: 2048 });

  it('turns HTML into readable text', async () => {
    const text = await run(tool, [`${main.origin}/page`]);
    expect(text).toBe(`## Herald & Friends\nURL: ${main.origin}/page\n\n# Release notes\n\nVersion 2 is out — see the changelog.\n\n- faster\n- safer ✓`);
  });

  it('reads at most maxBytes', async () => {
    const text = await run(tool, [`${main.origin}/big`]);
    expect(text).toContain('[only the first 2048 bytes were read]');
    expect(text.match(/x+/)![0]).toHaveLength(2048);
    // The cap counts decompressed bytes, so a small compressed body cannot expand without bound.
    const expanded = await run(tool, [`${main.origin}/gzip-big`]);
    expect(expanded).toContain('[only the first 2048 bytes were read]');
    expect(expanded.match(/y{10,}/)![0]).toHaveLength(2048);
  });

  it('decompresses gzip and returns JSON as is', async () => {
    expect(await run(tool, [`${main.origin}/gzip`])).toMatch(/\n\ncompressed hello$/);
    expect(await run(tool, [`${main.origin}/json`])).toMatch(/\n\n\{"ok":true,"items":\[1,2\]\}$/);
  });

  it('gives up on a server that does not answer', async () => {
    const impatient = createWebExtractTool({ allowlist: ['127.0.0.1'], timeoutMs: 300 });
    await expect(run(impatient, [`${main.origin}/hang`])).rejects.toThrow(/timed out after 0.3 s/);
  });

  it('refuses content that is not text', async () => {
    await expect(run(tool, [`${main.origin}/image`])).rejects.toThrow(/content type image\/png is not text/);
  });
});

describe('address policy', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '100.64.0.1',
    '169.254.169.254',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    'fc00::1',
    'fd12:3456::1',
    'fe80::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '64:ff9b::a00:1',
    '2002:7f00:1::1',
  ])('blocks %s', (address) => {
    expect(blockedReason(address)).not.toBeNull();
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows %s', (address) => {
    expect(blockedReason(address)).toBeNull();
  });

  it('finds IPv4 addresses inside IPv6 ones', () => {
    expect(embeddedIPv4('::ffff:7f00:1')).toBe('127.0.0.1');
    expect(embeddedIPv4('::ffff:192.168.0.1')).toBe('192.168.0.1');
    expect(embeddedIPv4('2606:4700::1')).toBeNull();
  });

  it('matches allowlist hosts, addresses and ranges', () => {
    const allowlist = new Allowlist(['Intranet.example.', '10.0.0.0/8', 'fd00::/8', '192.168.1.5']);
    expect(allowlist.allowsHost('intranet.example')).toBe(true);
    expect(allowlist.allowsHost('other.example')).toBe(false);
    expect(allowlist.allowsAddress('10.9.8.7')).toBe(true);
    expect(allowlist.allowsAddress('::ffff:10.9.8.7')).toBe(true);
    expect(allowlist.allowsAddress('fd00::5')).toBe(true);
    expect(allowlist.allowsAddress('192.168.1.5')).toBe(true);
    expect(allowlist.allowsAddress('192.168.1.6')).toBe(false);
    expect(() => new Allowlist(['10.0.0.0/40'])).toThrow(/bad prefix length/);
  });
});

describe('htmlToText', () => {
  it('drops scripts, styles, navigation and comments and keeps link text', () => {
    const { title, text } = htmlToText(PAGE);
    expect(title).toBe('Herald & Friends');
    expect(text).not.toMatch(/alert|color|Home|About|comment/);
    expect(text).toContain('see the changelog.');
  });
});
