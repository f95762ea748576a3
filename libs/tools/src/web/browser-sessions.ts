import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { isIP } from 'node:net';
import type { Browser, BrowserContext, Download, Page, Route } from 'playwright-core';
import { Allowlist, assertAddressAllowed, resolveAllowed } from './ssrf.ts';
import type { LookupFunction } from './ssrf.ts';

export interface BrowserSettings {
  /** Debian's chromium by default (HERALD_CHROMIUM_PATH). */
  chromiumPath: string;
  /** A session's browser context is closed after this long unused (HERALD_BROWSER_IDLE_MS). */
  idleMs: number;
  /** Hosts and ranges pages may reach although private (HERALD_WEB_ALLOWLIST, as web_extract). */
  allowlist: readonly string[];
  lookup?: LookupFunction;
}

interface SessionBrowser {
  context: BrowserContext;
  page: Page;
  timer: NodeJS.Timeout | undefined;
  workspace: string;
}

/** Why a URL may not be loaded, or null: schemes and addresses held to web_extract's SSRF rules. */
export async function blockedUrl(raw: string, allowlist: Allowlist, lookup?: LookupFunction): Promise<string | null> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'not a valid URL';
  }
  if (url.protocol === 'data:' || url.protocol === 'blob:' || url.href === 'about:blank') return null;
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `${url.protocol} URLs are not loaded; use http or https`;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  try {
    if (isIP(host) !== 0) assertAddressAllowed(host, host, allowlist);
    else await resolveAllowed(host, allowlist, lookup);
  } catch (error) {
    return (error as Error).message;
  }
  return null;
}

/**
 * One Chromium per worker, started on first use, and one browser context per session (its own
 * cookies and storage), closed when the session leaves it idle. Every request a page makes, the
 * navigation and each subresource, is checked against the SSRF rules by request interception.
 */
export class BrowserSessions {
  readonly #settings: BrowserSettings;
  readonly #allowlist: Allowlist;
  readonly #sessions = new Map<string, Promise<SessionBrowser>>();
  #browser: Promise<Browser> | null = null;

  constructor(settings: BrowserSettings) {
    this.#settings = settings;
    this.#allowlist = new Allowlist(settings.allowlist);
  }

  /** Why the browser tools cannot run here, or undefined. */
  get unavailable(): string | undefined {
    return existsSync(this.#settings.chromiumPath) ? undefined : `Chromium is not installed at ${this.#settings.chromiumPath} (apt-get install chromium, or set HERALD_CHROMIUM_PATH)`;
  }

  blocked(url: string): Promise<string | null> {
    return blockedUrl(url, this.#allowlist, this.#settings.lookup);
  }

  #launch(): Promise<Browser> {
    this.#browser ??= import('playwright-core').then(({ chromium }) =>
      // Chromium's own sandbox refuses to start as root (containers, CI); elsewhere it stays on.
      chromium.launch({ executablePath: this.#settings.chromiumPath, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] }),
    );
    return this.#browser;
  }

  async #guard(route: Route): Promise<void> {
    const reason = await this.blocked(route.request().url());
    if (reason === null) await route.continue();
    else await route.abort('blockedbyclient');
  }

  async #open(sessionId: string, workspace: string): Promise<SessionBrowser> {
    const browser = await this.#launch();
    const context = await browser.newContext({ acceptDownloads: true, serviceWorkers: 'block' });
    await context.route('**/*', (route) => this.#guard(route));
    const page = await context.newPage();
    const entry: SessionBrowser = { context, page, timer: undefined, workspace };
    context.on('page', (opened) => (entry.page = opened));
    page.on('download', (download) => void this.#save(entry, download));
    context.on('close', () => this.#sessions.delete(sessionId));
    return entry;
  }

  async #save(entry: SessionBrowser, download: Download): Promise<void> {
    const dir = join(entry.workspace, 'downloads');
    await mkdir(dir, { recursive: true });
    // The page names the file; only its last component is kept, inside the workspace.
    const name = basename(download.suggestedFilename()).replace(/^\.+/, '') || 'download';
    await download.saveAs(join(dir, name)).catch(() => undefined);
  }

  /** The session's page, opening its context on first use; every use pushes the idle close back. */
  async page(sessionId: string, workspace: string): Promise<Page> {
    let opening = this.#sessions.get(sessionId);
    if (!opening) {
      opening = this.#open(sessionId, workspace);
      this.#sessions.set(sessionId, opening);
      opening.catch(() => this.#sessions.delete(sessionId));
    }
    const entry = await opening;
    clearTimeout(entry.timer);
    entry.timer = setTimeout(() => void this.close(sessionId), this.#settings.idleMs);
    entry.timer.unref();
    return entry.page;
  }

  has(sessionId: string): boolean {
    return this.#sessions.has(sessionId);
  }

  async close(sessionId: string): Promise<boolean> {
    const opening = this.#sessions.get(sessionId);
    if (!opening) return false;
    this.#sessions.delete(sessionId);
    const entry = await opening.catch(() => null);
    if (entry) {
      clearTimeout(entry.timer);
      await entry.context.close().catch(() => undefined);
    }
    return true;
  }

  /** At shutdown: every context, then Chromium. */
  async closeAll(): Promise<void> {
    await Promise.all([...this.#sessions.keys()].map((id) => this.close(id)));
    const browser = this.#browser;
    this.#browser = null;
    if (browser) await (await browser.catch(() => null))?.close().catch(() => undefined);
  }
}
