import { ApiError, callWith, forgetToken, isOpenApi, probeOpenApi, storedToken, storeToken, whenUnauthorized } from './api.ts';
import { link, parseRoute } from './app.ts';
import type { Page, PageContext } from './app.ts';
import { h, notice, replace } from './dom.ts';
import { sessionsPage } from './pages/sessions.ts';
import { sessionPage } from './pages/session.ts';
import { searchPage } from './pages/search.ts';
import { cronPage } from './pages/cron.ts';
import { skillsPage } from './pages/skills.ts';
import { memoryPage } from './pages/memory.ts';
import { runsPage } from './pages/runs.ts';
import { profilesPage } from './pages/profiles.ts';
import { usagePage } from './pages/usage.ts';

// Pages few visits need load on first use, keeping the first page's script small.
const chatPage: Page = async (context) => (await import('./pages/chat.ts')).chatPage(context);

const PAGES: Record<string, { title: string; page: Page; nav: boolean }> = {
  sessions: { title: 'Sessions', page: sessionsPage, nav: true },
  chat: { title: 'Chat', page: chatPage, nav: true },
  session: { title: 'Session', page: sessionPage, nav: false },
  search: { title: 'Search', page: searchPage, nav: true },
  cron: { title: 'Cron', page: cronPage, nav: true },
  profiles: { title: 'Profiles', page: profilesPage, nav: true },
  skills: { title: 'Skills', page: skillsPage, nav: true },
  memory: { title: 'Memory', page: memoryPage, nav: true },
  runs: { title: 'Runs', page: runsPage, nav: true },
  usage: { title: 'Usage', page: usagePage, nav: true },
};

const main = document.getElementById('main') as HTMLElement;
const nav = document.getElementById('nav') as HTMLElement;
const signOut = document.getElementById('sign-out') as HTMLButtonElement;

let timers: number[] = [];
let generation = 0;
let leaving = new AbortController();

/** Stops what the shown page runs: its refresh timers and its streams. */
function leavePage(): void {
  for (const timer of timers) clearInterval(timer);
  timers = [];
  generation++;
  leaving.abort();
  leaving = new AbortController();
}

function drawNav(active: string): void {
  const current = active === 'session' ? 'sessions' : active;
  replace(
    nav,
    ...Object.entries(PAGES)
      .filter(([, entry]) => entry.nav)
      .map(([name, entry]) => h('a', { href: link(name), ...(name === current ? { 'aria-current': 'page' } : {}) }, entry.title)),
  );
}

function signIn(message = ''): void {
  leavePage();
  nav.hidden = true;
  signOut.hidden = true;
  document.title = 'Sign in · Herald console';
  const token = h('input', { id: 'token', name: 'token', type: 'password', autocomplete: 'current-password', required: true });
  const status = h('div', { 'aria-live': 'polite' }, message ? notice(message, 'error') : null);
  const submit = async (event: Event) => {
    event.preventDefault();
    const value = token.value.trim();
    if (value === '') return;
    try {
      await callWith(value, 'GET', '/v1/admin/status');
      storeToken(value);
      render();
    } catch (error) {
      const text =
        error instanceof ApiError && error.status === 401
          ? "That token was refused: compare it with HERALD_API_TOKEN in the .env Herald started from (or its environment) and try again."
          : `Could not reach Herald: ${(error as Error).message}`;
      replace(status, notice(text, 'error'));
      token.select();
    }
  };
  const form = h(
    'form',
    { class: 'card sign-in', on: { submit: (event) => void submit(event) } },
    h('h1', {}, 'Sign in'),
    h(
      'p',
      {},
      'The console uses the API token: HERALD_API_TOKEN, from the .env that `herald init` wrote (next to where Herald was started) or from the environment Herald was started with. It is kept in this tab only, until you close it or sign out.',
    ),
    h('div', { class: 'field' }, h('label', { for: 'token' }, 'API token'), token),
    status,
    h('button', { type: 'submit', class: 'primary' }, 'Sign in'),
  );
  replace(main, form);
  token.focus();
}

function context(route: ReturnType<typeof parseRoute>): PageContext {
  const mine = generation;
  return {
    main,
    route,
    signal: leaving.signal,
    current: () => mine === generation,
    every: (ms, refresh) => {
      let busy = false;
      const timer = window.setInterval(() => {
        if (busy || mine !== generation || document.hidden) return;
        busy = true;
        refresh()
          .catch(() => undefined)
          .finally(() => (busy = false));
      }, ms);
      timers.push(timer);
    },
  };
}

function render(): void {
  leavePage();
  if (storedToken() === null && !isOpenApi()) return signIn();
  const route = parseRoute(location.hash);
  const entry = PAGES[route.page] ?? PAGES.sessions!;
  nav.hidden = false;
  signOut.hidden = isOpenApi();
  drawNav(route.page);
  document.title = `${entry.title} · Herald console`;
  replace(main, h('p', { class: 'loading' }, 'Loading…'));
  const ctx = context(route);
  entry.page(ctx).catch((error: unknown) => {
    if (!ctx.current()) return;
    if (error instanceof ApiError && error.status === 401) return;
    replace(main, h('h1', {}, entry.title), notice(error instanceof Error ? error.message : String(error), 'error'));
  });
  main.focus({ preventScroll: true });
}

whenUnauthorized((message) => signIn(message));
signOut.addEventListener('click', () => {
  forgetToken();
  signIn('Signed out.');
});
window.addEventListener('hashchange', render);

/** Said on every page of an open API: why nobody was asked to sign in, and how to require it. */
function showOpenApi(): void {
  const banner = notice(
    'No sign-in: this Herald has no API token (HERALD_API_TOKEN is not set), so its API listens on this machine only and anyone on it may use this console. Set HERALD_API_TOKEN (herald init writes one) to require it.',
    'info',
  );
  banner.id = 'open-api';
  main.before(banner);
}

void probeOpenApi().then((open) => {
  if (open) showOpenApi();
  render();
});
