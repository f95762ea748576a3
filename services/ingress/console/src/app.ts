// What every page gets: where to draw, the route's parts, live refresh that stops when the page is
// left, and a confirmation step for destructive actions.

export interface Route {
  page: string;
  parts: string[];
  params: URLSearchParams;
}

export interface PageContext {
  main: HTMLElement;
  route: Route;
  /** Calls `refresh` every `ms` while this page is shown (the live view: polling, no reload). */
  every(ms: number, refresh: () => Promise<void>): void;
  /** True while this page is still the one shown (a slow answer must not draw over the next page). */
  current(): boolean;
  /** Aborted when the page is left: ends the streams it follows. */
  signal: AbortSignal;
}

export type Page = (context: PageContext) => Promise<void>;

export function parseRoute(hash: string): Route {
  const text = hash.replace(/^#\/?/, '');
  const [path = '', search = ''] = text.split('?', 2);
  const parts = path
    .split('/')
    .filter((part) => part.length > 0)
    .map((part) => {
      try {
        return decodeURIComponent(part);
      } catch {
        return part;
      }
    });
  return { page: parts[0] ?? 'sessions', parts: parts.slice(1), params: new URLSearchParams(search) };
}

/** A hash link for a page, its path parts (percent-encoded) and parameters. */
export function link(page: string, parts: string[] = [], params: Record<string, string | undefined> = {}): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== '') search.set(key, value);
  const path = [page, ...parts.map((part) => encodeURIComponent(part))].join('/');
  const text = search.toString();
  return `#/${path}${text ? `?${text}` : ''}`;
}

export function go(href: string): void {
  if (location.hash === href) window.dispatchEvent(new HashChangeEvent('hashchange'));
  else location.hash = href;
}

/** Asks before a destructive action, in a modal dialog (keyboard: Tab between buttons, Esc cancels). */
export function confirmAction(text: string, note = ''): Promise<boolean> {
  const dialog = document.getElementById('confirm') as HTMLDialogElement;
  (document.getElementById('confirm-text') as HTMLElement).textContent = text;
  const noteElement = document.getElementById('confirm-note') as HTMLElement;
  noteElement.textContent = note;
  noteElement.hidden = note === '';
  const ok = document.getElementById('confirm-ok') as HTMLButtonElement;
  const cancel = document.getElementById('confirm-cancel') as HTMLButtonElement;
  return new Promise((resolve) => {
    const finish = (answer: boolean) => {
      ok.removeEventListener('click', onOk);
      cancel.removeEventListener('click', onCancel);
      dialog.removeEventListener('cancel', onCancel);
      if (dialog.open) dialog.close();
      resolve(answer);
    };
    const onOk = () => finish(true);
    const onCancel = () => finish(false);
    ok.addEventListener('click', onOk);
    cancel.addEventListener('click', onCancel);
    dialog.addEventListener('cancel', onCancel);
    dialog.showModal();
    cancel.focus();
  });
}
