import {
  ApiError,
  callWith,
  currentCookieSession,
  endCookieSession,
  forgetToken,
  isOpenApi,
  probeCookieSession,
  probeOpenApi,
  signInWithPersonalToken,
  singleSignOnOffered,
  storedToken,
  storeToken,
  whenUnauthorized,
} from './api.ts';
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

/** `roles`: the roles that see the page in the menu (docs/security.md's route table); unset: every role. */
const PAGES: Record<string, { title: string; page: Page; nav: boolean; roles?: readonly string[] }> = {
  sessions: { title: 'Sessions', page: sessionsPage, nav: true },
  chat: { title: 'Chat', page: chatPage, nav: true, roles: ['admin', 'operator', 'member'] },
  session: { title: 'Session', page: sessionPage, nav: false },
  search: { title: 'Search', page: searchPage, nav: true },
  cron: { title: 'Cron', page: cronPage, nav: true },
  profiles: { title: 'Profiles', page: profilesPage, nav: true },
  skills: { title: 'Skills', page: skillsPage, nav: true, roles: ['admin', 'operator', 'viewer'] },
  memory: { title: 'Memory', page: memoryPage, nav: true },
  runs: { title: 'Runs', page: runsPage, nav: true, roles: ['admin', 'operator', 'viewer'] },
  usage: { title: 'Usage', page: usagePage, nav: true },
};

/** Whether the signed-in person's roles show a page (the API token and an open API see every page). */
function shown(entry: { roles?: readonly string[] }): boolean {
  const session = currentCookieSession();
  return session === null || entry.roles === undefined || session.roles.some((role) => entry.roles!.includes(role));
}

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
      .filter(([, entry]) => entry.nav && shown(entry))
      .map(([name, entry]) => h('a', { href: link(name), ...(name === current ? { 'aria-current': 'page' } : {}) }, entry.title)),
  );
}

function signIn(message = ''): void {
  leavePage();
  nav.hidden = true;
  signOut.hidden = true;
  document.title = 'Sign in · Herald console';
  const token = h('input', { id: 'token', name: 'token', type: 'password', autocomplete: 'current-password', required: true });
  // A refused single sign-on comes back here with its reason (signin_error), said once.
  const refused = new URLSearchParams(location.search).get('signin_error');
  const said = message || (refused === null ? '' : `Single sign-on was refused: ${refused}`);
  const status = h('div', { 'aria-live': 'polite' }, said ? notice(said, 'error') : null);
  const submit = async (event: Event) => {
    event.preventDefault();
    const value = token.value.trim();
    if (value === '') return;
    try {
      // A personal token (hrd_...) opens a console session held by a cookie; the API token is kept in this tab.
      if (value.startsWith('hrd_')) await signInWithPersonalToken(value);
      else {
        await callWith(value, 'GET', '/v1/admin/status');
        storeToken(value);
      }
      history.replaceState(null, '', location.pathname + location.hash);
      render();
    } catch (error) {
      const text =
        error instanceof ApiError && error.status === 401
          ? 'That token was refused: compare it with HERALD_API_TOKEN in the .env Herald started from (or its environment), or make a personal one with herald tokens create, and try again.'
          : `Could not reach Herald: ${(error as Error).message}`;
      replace(status, notice(text, 'error'));
      token.select();
    }
  };
  const sso = h('p', { id: 'sso', hidden: true }, h('a', { class: 'button primary', href: '/v1/auth/oidc/login' }, 'Sign in with single sign-on'));
  void singleSignOnOffered().then((offered) => (sso.hidden = !offered));
  const form = h(
    'form',
    { class: 'card sign-in', on: { submit: (event) => void submit(event) } },
    h('h1', {}, 'Sign in'),
    h(
      'p',
      {},
      'The console uses the API token: HERALD_API_TOKEN, from the .env that `herald init` wrote (next to where Herald was started) or from the environment Herald was started with. It is kept in this tab only, until you close it or sign out. A personal token (herald tokens create) signs you in as yourself.',
    ),
    sso,
    h('div', { class: 'field' }, h('label', { for: 'token' }, 'API token or personal token'), token),
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
  if (storedToken() === null && currentCookieSession() === null && !isOpenApi()) return signIn();
  const route = parseRoute(location.hash);
  const entry = PAGES[route.page] ?? PAGES.sessions!;
  nav.hidden = false;
  signOut.hidden = isOpenApi() && currentCookieSession() === null;
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
  void endCookieSession().then(() => signIn('Signed out.'));
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

void Promise.all([probeOpenApi(), probeCookieSession()]).then(([open, session]) => {
  if (open && session === null) showOpenApi();
  render();
});
