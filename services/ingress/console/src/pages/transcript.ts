import { api, query, segment } from '../api.ts';
import type { PageContext } from '../app.ts';
import { h, replace } from '../dom.ts';
import { timeElement } from '../time.ts';
import { followEvent } from '../turn-stream.ts';
import { turnView } from '../turn-view.ts';
import { attachmentList } from '../attachments-view.ts';
import type { TranscriptMessage, TranscriptPage } from '../../../src/contracts/session-views.ts';
import type { OpenEventList } from '../../../src/contracts/message-views.ts';

export type { TranscriptMessage };

const PAGE = 100;
// How often a shown session is asked whether a turn runs in it.
const LIVE_CHECK_MS = 2000;

function pretty(value: unknown): string {
  if (typeof value !== 'string') return JSON.stringify(value, null, 2);
  try {
    return JSON.stringify(JSON.parse(value), null, 2);
  } catch {
    return value;
  }
}

/** Tool calls and results are folded: a summary line, the arguments or output behind it. */
function folded(kind: string, summary: string, body: string, open: boolean): HTMLElement {
  return h('details', { class: `fold ${kind}`, open }, h('summary', {}, summary), h('pre', { class: 'text' }, body));
}

function messageElement(sessionId: string, message: TranscriptMessage, target: string | null): HTMLElement {
  const hit = message.id === target;
  const header = h('div', { class: 'msg-head' }, h('span', { class: `role ${message.role}` }, message.role), h('span', { class: 'seq' }, `#${message.seq}`), timeElement(message.created_at));
  const body: HTMLElement[] = [];
  if (message.role === 'tool') {
    body.push(folded('tool-result', `result of ${message.name ?? 'a tool'} · ${message.content.length} characters`, message.content, hit));
  } else {
    if (message.content !== '') body.push(h('div', { class: 'text' }, message.content));
    const files = attachmentList(sessionId, message.attachments);
    if (files !== null) body.push(files);
    for (const call of message.tool_calls ?? []) body.push(folded('tool-call', `calls ${call.name}`, pretty(call.arguments), hit));
  }
  return h('li', { class: `msg ${message.role}${hit ? ' hit' : ''}`, id: `m-${message.id}`, 'data-message': message.id, 'data-seq': String(message.seq) }, header, ...body);
}

/**
 * A running turn of the session, followed as it streams (its text and tool lines) below the stored
 * transcript; when it ends, `ended` appends the committed messages and the streamed view goes.
 */
function liveTurn(ctx: PageContext, sessionId: string, ended: () => Promise<void>): { element: HTMLElement; check: () => Promise<void> } {
  const element = h('div', { class: 'live-turn', 'aria-live': 'polite' });
  let following = false;
  const check = async () => {
    if (following) return;
    const { events } = await api<OpenEventList>('GET', `/v1/sessions/${segment(sessionId)}/open-events`);
    const open = events.find((event) => event.status === 'processing') ?? events[0];
    if (open === undefined || !ctx.current()) return;
    following = true;
    const view = turnView();
    const header = h('div', { class: 'msg-head' }, h('span', { class: 'role assistant' }, 'assistant'), h('span', { class: 'badge muted' }, 'answering live'));
    replace(element, h('div', { class: 'msg assistant live', 'data-live-event': open.event_id }, header, view.element));
    try {
      await followEvent(open.event_id, { event: view.show }, ctx.signal);
    } finally {
      following = false;
      if (ctx.current()) {
        await ended().catch(() => undefined);
        replace(element);
      }
    }
  };
  return { element, check };
}

/**
 * The transcript by keyset pages of 100 (a 10,000-message session opens as fast as a short one):
 * the newest page, or the page around the message a search hit names; older and newer on request,
 * and new messages appended while the page is open.
 */
export async function transcriptSection(ctx: PageContext, sessionId: string, target: string | null): Promise<HTMLElement> {
  const list = h('ol', { class: 'transcript', 'aria-label': 'Transcript' });
  const older = h('div', { class: 'more' });
  const newer = h('div', { class: 'more' });
  const base = `/v1/sessions/${segment(sessionId)}/messages`;
  let first = 0;
  let last = 0;
  let hasAfter = false;
  const fetchPage = (params: Record<string, string | number | undefined>) => api<TranscriptPage>('GET', `${base}${query({ limit: PAGE, ...params })}`);
  const drawButtons = (hasBefore: boolean) => {
    replace(older, hasBefore ? h('button', { type: 'button', on: { click: () => void loadOlder() } }, 'Load older messages') : null);
    replace(newer, hasAfter ? h('button', { type: 'button', on: { click: () => void loadNewer() } }, 'Load newer messages') : null);
  };
  const loadOlder = async () => {
    const page = await fetchPage({ before: first });
    list.prepend(...page.messages.map((message) => messageElement(sessionId, message, target)));
    first = page.messages[0]?.seq ?? first;
    drawButtons(page.has_before);
  };
  const hasBeforeNow = () => older.childElementCount > 0;
  // One at a time: the timer and the end of a live turn both append, never the same page twice.
  let appending: Promise<void> = Promise.resolve();
  const loadNewer = () => (appending = appending.catch(() => undefined).then(appendNewer));
  const appendNewer = async () => {
    const page = await fetchPage({ after: last });
    list.append(...page.messages.map((message) => messageElement(sessionId, message, target)));
    last = page.messages.at(-1)?.seq ?? last;
    hasAfter = page.has_after;
    drawButtons(hasBeforeNow());
  };
  const page = await fetchPage(target ? { around: target } : {});
  list.append(...page.messages.map((message) => messageElement(sessionId, message, target)));
  first = page.messages[0]?.seq ?? 0;
  last = page.messages.at(-1)?.seq ?? 0;
  hasAfter = page.has_after;
  drawButtons(page.has_before);
  // Live: while the newest message is on the page, what the session adds is appended, and a
  // running turn streams below it.
  ctx.every(3000, async () => {
    if (!hasAfter) await loadNewer();
  });
  const live = liveTurn(ctx, sessionId, async () => {
    if (!hasAfter) await loadNewer();
  });
  const checkLive = async () => {
    if (!hasAfter) await live.check();
  };
  void checkLive().catch(() => undefined);
  ctx.every(LIVE_CHECK_MS, checkLive);
  const empty = page.messages.length === 0 ? h('p', { class: 'muted' }, 'No messages yet.') : null;
  return h('section', { 'aria-labelledby': 'transcript-title' }, h('h2', { id: 'transcript-title' }, 'Transcript'), empty, older, list, live.element, newer);
}
