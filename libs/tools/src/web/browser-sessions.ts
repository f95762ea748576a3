import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { isIP } from 'node:net';
import type { Browser, BrowserContext, Download, Page } from 'playwright-core';
import { EgressProxy } from './browser-egress.ts';
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
  /** The context's only way out: every connection it makes, checked and pinned. */
  egress: EgressProxy;
  /** The page the tools act on: the newest one open (a popup, once the page opens one). */
  page: Page;
  timer: NodeJS.Timeout | undefined;
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
 * cookies and storage), closed when the session leaves it idle. Every connection a context makes
 * (navigations and each redirect hop, subresources, WebSockets) goes through its own egress
 * proxy, which holds it to the SSRF rules on the address it connects to
 * (docs/decisions/2026-12-06-browser-egress.md).
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
      chromium.launch({
        executablePath: this.#settings.chromiumPath,
        args: [
          // WebRTC may not send UDP around the proxy (its TCP goes through it, and is checked there).
          '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
          // Chromium's own sandbox refuses to start as root (containers, CI); elsewhere it stays on.
          ...(process.getuid?.() === 0 ? ['--no-sandbox'] : []),
        ],
      }),
    );
    return this.#browser;
  }

  async #open(sessionId: string, workspace: string): Promise<SessionBrowser> {
    const browser = await this.#launch();
    const egress = await EgressProxy.start(this.#allowlist, this.#settings.lookup);
    const failed = async (error: unknown, context?: BrowserContext): Promise<never> => {
      await context?.close().catch(() => undefined);
      await egress.close();
      throw error;
    };
    // `<-loopback>` drops Chromium's default of connecting to loopback directly: loopback goes through the proxy too.
    const context = await browser.newContext({ acceptDownloads: true, serviceWorkers: 'block', proxy: { server: egress.server, bypass: '<-loopback>' } }).catch(failed);
    const first = await context.newPage().catch((error: unknown) => failed(error, context));
    const entry: SessionBrowser = { context, egress, page: first, timer: undefined };
    const watch = (page: Page) => {
      entry.page = page;
      page.on('download', (download) => void this.#save(workspace, download));
      page.once('close', () => {
        if (entry.page === page) entry.page = context.pages().at(-1) ?? page;
      });
    };
    // Every page of the context, the first one and each popup, saves its downloads.
    watch(first);
    context.on('page', watch);
    context.on('close', () => {
      this.#sessions.delete(sessionId);
      void egress.close();
    });
    return entry;
  }

  async #save(workspace: string, download: Download): Promise<void> {
    const dir = join(workspace, 'downloads');
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

  /** What the session's egress proxy refused since the last call (newest last), forgetting it. */
  async takeRefusals(sessionId: string): Promise<string[]> {
    const entry = await this.#sessions.get(sessionId)?.catch(() => null);
    return entry?.egress.takeRefusals() ?? [];
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
