import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSessions } from '../src/web/browser-sessions.ts';
import { createBrowserTools } from '../src/web/browser-tools.ts';
import { builtinRegistry } from '../src/index.ts';
import { ToolExposure } from '../src/shared/tool-policy.ts';
import type { Tool } from '../src/shared/tool.ts';
import { startFakeHttp } from '../../../test/support/fake-http.ts';
import type { FakeHttpServer } from '../../../test/support/fake-http.ts';
import { offlineContext } from './call-context.ts';

const CHROMIUM = '/usr/bin/chromium';

let site: FakeHttpServer;
let inside: FakeHttpServer;
let sessions: BrowserSessions;
let tools: Map<string, Tool>;
let base: string;

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'herald-browser-'));
  // A private address the allowlist does not name: nothing may reach it.
  inside = await startFakeHttp((_request, response) => response.end('secret'), { host: '127.0.0.2' });
  site = await startFakeHttp((request, response) => {
    response.setHeader('content-type', 'text/html');
    if (request.path === '/form') {
      return response.end(`<!doctype html><title>Sign up</title><h1>Sign up</h1>
        <img src="${inside.origin}/pixel.png" alt="tracker">
        <form method="post" action="/submit"><label>Name <input name="name"></label><button type="submit">Send</button></form>`);
    }
    if (request.path.startsWith('/files/')) {
      response.setHeader('content-type', 'text/plain');
      response.setHeader('content-disposition', `attachment; filename="${request.path.slice('/files/'.length)}"`);
      return response.end(`contents of ${request.path}`);
    }
    if (request.path === '/downloads') {
      return response.end(`<!doctype html><title>Files</title><a href="/files/report.txt">Report</a>
        <a href="/popup" target="_blank">Popup</a>`);
    }
    if (request.path === '/popup') return response.end('<!doctype html><title>Popup</title><a href="/files/popup.txt">Popup report</a>');
    if (request.path === '/submit') return response.end(`<!doctype html><title>Done</title><p>Thanks, ${String(request.raw).replace('name=', '')}</p>`);
    return response.end('<!doctype html><title>Home</title><a href="/form">Form</a>');
  });
  sessions = new BrowserSessions({ chromiumPath: CHROMIUM, idleMs: 60_000, allowlist: ['127.0.0.1'] });
  tools = new Map(createBrowserTools(sessions).map((tool) => [tool.name, tool]));
});
afterAll(async () => {
  await sessions.closeAll();
  await Promise.all([site.close(), inside.close()]);
  await rm(base, { recursive: true, force: true });
});

const call = (name: string, args: unknown, sessionId = 'b1') => {
  const tool = tools.get(name)!;
  return tool.execute(tool.schema.parse(args), offlineContext({ sessionId, workspaceDir: join(base, sessionId) }));
};
/** A download is saved after the click returns: wait for the file. */
const fileSoon = async (path: string): Promise<string> => {
  for (let i = 0; ; i++) {
    const text = await readFile(path, 'utf8').catch(() => null);
    if (text !== null || i === 50) return text ?? 'missing';
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};
const refOf = (snapshot: string, pattern: RegExp) => {
  const line = snapshot.split('\n').find((l) => pattern.test(l));
  return /\[ref=(e\d+)\]/.exec(line ?? '')?.[1] ?? '';
};

describe('browser tools (playwright-core, system Chromium)', () => {
  it('navigates, snapshots with refs, fills and submits a form, and goes back', async () => {
    const page = await call('browser_navigate', { url: `${site.origin}/form` });
    expect(page).toContain('Title: Sign up');
    const textbox = refOf(page, /textbox "Name"/);
    const send = refOf(page, /button "Send"/);
    expect(textbox).toMatch(/^e\d+$/);
    await call('browser_type', { ref: `@${textbox}`, text: 'Ada' });
    const submitted = await call('browser_click', { ref: send });
    expect(submitted).toContain('Thanks, Ada');
    expect(site.requests.find((r) => r.path === '/submit')).toMatchObject({ method: 'POST', body: 'name=Ada' });
    // The page's image on a private address was blocked by interception, never fetched.
    expect(inside.requests).toEqual([]);
    expect(await call('browser_back', {})).toContain('Title: Sign up');
    expect(await call('browser_vision', {})).toMatch(/Screenshot saved to screenshots\/\d+\.png in the workspace\. This model cannot be shown images/);
    expect(await call('browser_close', {})).toBe('Browser closed.');
    expect(sessions.has('b1')).toBe(false);
  }, 60_000);

  it('refuses a navigation to a private address, and keeps sessions apart', async () => {
    await expect(call('browser_navigate', { url: `${inside.origin}/` }, 'b2')).rejects.toThrow(/refused: .*127\.0\.0\.2.*loopback, private/);
    await expect(call('browser_navigate', { url: 'file:///etc/passwd' }, 'b2')).rejects.toThrow(/file: URLs are not loaded/);
    expect(inside.requests).toEqual([]);
    await call('browser_navigate', { url: `${site.origin}/` }, 'b3');
    expect(await call('browser_snapshot', {}, 'b2')).toContain('URL: about:blank');
  }, 60_000);

  it("saves downloads into the workspace's downloads folder, from the page and from a popup it opens", async () => {
    const page = await call('browser_navigate', { url: `${site.origin}/downloads` }, 'd1');
    await call('browser_click', { ref: refOf(page, /link "Report"/) }, 'd1');
    expect(await fileSoon(join(base, 'd1', 'downloads', 'report.txt'))).toBe('contents of /files/report.txt');
    // The link opens a new page (a popup); the tools act on it, and its download is saved as well.
    await call('browser_click', { ref: refOf(page, /link "Popup"/) }, 'd1');
    let popup = '';
    for (let i = 0; i < 50 && !popup.includes('Title: Popup'); i++) popup = await call('browser_snapshot', {}, 'd1');
    expect(popup).toContain('Title: Popup');
    await call('browser_click', { ref: refOf(popup, /link "Popup report"/) }, 'd1');
    expect(await fileSoon(join(base, 'd1', 'downloads', 'popup.txt'))).toBe('contents of /files/popup.txt');
  }, 60_000);

  it('is off by default: offered only to a profile that enables the browser toolset', () => {
    const registry = builtinRegistry({ browser: sessions });
    const exposure = new ToolExposure(registry);
    expect(exposure.resolve({ policy: {}, platform: 'api', role: 'chat' }).some((name) => name.startsWith('browser_'))).toBe(false);
    expect(exposure.resolve({ policy: { enabled: ['browser'] }, platform: 'api', role: 'chat' })).toEqual([
      'browser_back',
      'browser_click',
      'browser_close',
      'browser_navigate',
      'browser_press',
      'browser_scroll',
      'browser_snapshot',
      'browser_type',
      'browser_vision',
    ]);
  });
});
