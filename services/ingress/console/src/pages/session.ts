import { api, query, segment } from '../api.ts';
import { confirmAction, link } from '../app.ts';
import type { PageContext } from '../app.ts';
import { h, replace } from '../dom.ts';
import { timeElement } from '../time.ts';
import { sessionRow } from './sessions.ts';
import { transcriptSection } from './transcript.ts';
import type { DeliveryList, RunList, RunView, SessionList, SessionRecord } from '../../../src/contracts/session-views.ts';
import type { WaitList, WaitView } from '../../../src/contracts/message-views.ts';

type SessionView = SessionRecord;
type Wait = WaitView;
/** A child run of delegate_task (GET /v1/runs?session_id=): its task, state and child session. */
type RunSummary = RunView;

const LINEAGE_LIMIT = 20;

function runRow(run: RunSummary): HTMLElement {
  return h(
    'li',
    { class: 'row', 'data-run': run.id },
    h('a', { href: link('session', [run.child_session_id]), class: 'row-main' }, h('span', { class: 'chat' }, run.goal)),
    h(
      'span',
      { class: 'meta' },
      h('span', { class: `badge ${run.status === 'done' ? 'ok' : run.status === 'cancelled' ? 'warn' : 'muted'}` }, run.status),
      run.exit_reason ? h('span', {}, run.exit_reason) : null,
      run.background ? h('span', {}, 'background') : null,
    ),
  );
}

/** The chain of parents up to the root (compaction or subagent runs), then this session, then its children. */
async function lineageSection(session: SessionView): Promise<HTMLElement> {
  const chain: SessionView[] = [];
  let parent = session.parent_session_id;
  while (parent !== null && chain.length < LINEAGE_LIMIT) {
    const view: SessionView = await api<SessionView>('GET', `/v1/sessions/${segment(parent)}`);
    chain.unshift(view);
    parent = view.parent_session_id;
  }
  const [children, runs] = await Promise.all([
    api<SessionList>('GET', `/v1/sessions${query({ parent_id: session.session_id, limit: 50 })}`),
    api<RunList>('GET', `/v1/runs${query({ session_id: session.session_id, limit: 50 })}`),
  ]);
  const steps = [
    ...chain.map((view) => h('li', {}, h('a', { href: link('session', [view.session_id]) }, view.session_key), ' · ', timeElement(view.created_at))),
    h('li', { 'aria-current': 'true', class: 'here' }, 'this session'),
  ];
  return h(
    'section',
    { 'aria-labelledby': 'lineage-title' },
    h('h2', { id: 'lineage-title' }, 'Lineage'),
    chain.length === 0 ? h('p', { class: 'muted' }, 'No parent: this session starts its chain.') : h('ol', { class: 'chain', 'aria-label': 'Parents, oldest first' }, ...steps),
    children.sessions.length > 0 ? h('h3', {}, 'Child sessions') : h('p', { class: 'muted' }, 'No child sessions.'),
    children.sessions.length > 0 ? h('ul', { class: 'rows' }, ...children.sessions.map(sessionRow)) : null,
    runs.runs.length > 0 ? h('h3', {}, 'Subagent runs') : null,
    runs.runs.length > 0 ? h('ul', { class: 'rows', 'aria-label': 'Subagent runs' }, ...runs.runs.map(runRow)) : null,
  );
}

function waitElement(wait: Wait, refresh: () => void): HTMLElement {
  const answer = async (decision: 'approve' | 'deny') => {
    if (decision === 'deny' && !(await confirmAction(`Deny ${wait.tool ?? 'this call'}?`, 'The turn goes on without it.'))) return;
    await api('POST', `/v1/waits/${segment(wait.id)}`, { decision, user_id: 'console' });
    refresh();
  };
  const actions =
    wait.kind === 'approval'
      ? h(
          'div',
          { class: 'actions' },
          h('button', { type: 'button', on: { click: () => void answer('approve') } }, 'Approve once'),
          h('button', { type: 'button', class: 'danger', on: { click: () => void answer('deny') } }, 'Deny'),
        )
      : h('p', { class: 'muted' }, 'A question for the person; they answer in the chat.');
  return h(
    'li',
    { class: 'card' },
    h('strong', {}, `${wait.kind}: ${wait.tool ?? ''}`),
    h('div', { class: 'text' }, wait.prompt),
    h('details', { class: 'fold' }, h('summary', {}, 'arguments'), h('pre', { class: 'text' }, JSON.stringify(wait.arguments, null, 2))),
    h('p', { class: 'muted' }, 'asked ', timeElement(wait.created_at), wait.expires_at ? ' · lapses ' : '', wait.expires_at ? timeElement(wait.expires_at) : null),
    actions,
  );
}

async function waitsSection(ctx: PageContext, sessionId: string): Promise<HTMLElement> {
  const section = h('section', { 'aria-labelledby': 'waits-title', 'aria-live': 'polite' });
  const draw = async () => {
    const { waits } = await api<WaitList>('GET', `/v1/sessions/${segment(sessionId)}/waits`);
    const pending = waits.filter((wait) => wait.status === 'pending');
    replace(
      section,
      h('h2', { id: 'waits-title' }, `Pending approvals (${pending.length})`),
      pending.length === 0 ? h('p', { class: 'muted' }, 'Nothing waits for a person.') : h('ul', { class: 'cards' }, ...pending.map((wait) => waitElement(wait, () => void draw()))),
    );
  };
  await draw();
  ctx.every(5000, draw);
  return section;
}

async function deliveriesSection(sessionId: string): Promise<HTMLElement | null> {
  const { deliveries } = await api<DeliveryList>('GET', `/v1/sessions/${segment(sessionId)}/deliveries`);
  if (deliveries.length === 0) return null;
  const rows = deliveries
    .slice(0, 10)
    .map((delivery) =>
      h(
        'li',
        {},
        h('span', { class: `badge ${delivery.status === 'failed' ? 'bad' : delivery.status === 'delivered' ? 'ok' : 'muted'}` }, delivery.status),
        ' ',
        timeElement(delivery.created_at),
        delivery.last_error ? ` · ${delivery.last_error}` : '',
      ),
    );
  return h('section', {}, h('h2', {}, 'Deliveries'), h('ul', { class: 'plain' }, ...rows));
}

/** One session: who and where, lineage, pending approvals, the stored system prompt, the transcript. */
export async function sessionPage(ctx: PageContext): Promise<void> {
  const id = ctx.route.parts[0] ?? '';
  const target = ctx.route.params.get('at');
  // The sections that need only the id load beside the session's record, not after it: one round
  // trip fewer before the transcript shows (bench/console-bench.ts times it).
  const sections = Promise.all([waitsSection(ctx, id), deliveriesSection(id), transcriptSection(ctx, id, target)]);
  sections.catch(() => undefined);
  const session = await api<SessionView>('GET', `/v1/sessions/${segment(id)}`);
  const [lineage, [waits, deliveries, transcript]] = await Promise.all([lineageSection(session), sections]);
  if (!ctx.current()) return;
  const prompt =
    session.system_prompt === null
      ? h('p', { class: 'muted' }, 'No system prompt stored yet (it is built on the first turn).')
      : h(
          'details',
          { class: 'fold' },
          h('summary', {}, `Stored system prompt · ${session.system_prompt.length} characters, sent byte for byte on every turn`),
          h('pre', { class: 'text' }, session.system_prompt),
        );
  replace(
    ctx.main,
    h('p', {}, h('a', { href: link('sessions') }, '← Sessions')),
    h('h1', { class: 'mono wrap' }, session.session_key),
    h(
      'p',
      { class: 'meta' },
      h('span', {}, `profile ${session.profile}`),
      h('span', {}, `platform ${session.platform}`),
      h('span', {}, `queue mode ${session.queue_mode}`),
      h('span', {}, 'started ', timeElement(session.created_at)),
    ),
    lineage,
    waits,
    h('section', {}, h('h2', {}, 'System prompt'), prompt),
    deliveries,
    transcript,
  );
  const hit = target ? document.getElementById(`m-${target}`) : null;
  if (hit) {
    hit.setAttribute('tabindex', '-1');
    hit.scrollIntoView({ block: 'center' });
    hit.focus({ preventScroll: true });
  }
}
