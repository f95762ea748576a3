import { api, query, segment } from '../api.ts';
import type { PageContext } from '../app.ts';
import { h, replace } from '../dom.ts';
import { timeElement } from '../time.ts';
import type { TranscriptMessage, TranscriptPage } from '../../../src/contracts/session-views.ts';

export type { TranscriptMessage };

const PAGE = 100;

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

function messageElement(message: TranscriptMessage, target: string | null): HTMLElement {
  const hit = message.id === target;
  const header = h('div', { class: 'msg-head' }, h('span', { class: `role ${message.role}` }, message.role), h('span', { class: 'seq' }, `#${message.seq}`), timeElement(message.created_at));
  const body: HTMLElement[] = [];
  if (message.role === 'tool') {
    body.push(folded('tool-result', `result of ${message.name ?? 'a tool'} · ${message.content.length} characters`, message.content, hit));
  } else {
    if (message.content !== '') body.push(h('div', { class: 'text' }, message.content));
    for (const call of message.tool_calls ?? []) body.push(folded('tool-call', `calls ${call.name}`, pretty(call.arguments), hit));
  }
  return h('li', { class: `msg ${message.role}${hit ? ' hit' : ''}`, id: `m-${message.id}`, 'data-message': message.id, 'data-seq': String(message.seq) }, header, ...body);
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
    list.prepend(...page.messages.map((message) => messageElement(message, target)));
    first = page.messages[0]?.seq ?? first;
    drawButtons(page.has_before);
  };
  const hasBeforeNow = () => older.childElementCount > 0;
  const loadNewer = async () => {
    const page = await fetchPage({ after: last });
    list.append(...page.messages.map((message) => messageElement(message, target)));
    last = page.messages.at(-1)?.seq ?? last;
    hasAfter = page.has_after;
    drawButtons(hasBeforeNow());
  };
  const page = await fetchPage(target ? { around: target } : {});
  list.append(...page.messages.map((message) => messageElement(message, target)));
  first = page.messages[0]?.seq ?? 0;
  last = page.messages.at(-1)?.seq ?? 0;
  hasAfter = page.has_after;
  drawButtons(page.has_before);
  // Live: while the newest message is on the page, what the session adds is appended.
  ctx.every(3000, async () => {
    if (!hasAfter) await loadNewer();
  });
  const empty = page.messages.length === 0 ? h('p', { class: 'muted' }, 'No messages yet.') : null;
  return h('section', { 'aria-labelledby': 'transcript-title' }, h('h2', { id: 'transcript-title' }, 'Transcript'), empty, older, list, newer);
}
