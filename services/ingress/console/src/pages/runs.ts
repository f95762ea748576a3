import { api, segment } from '../api.ts';
import { confirmAction, link } from '../app.ts';
import type { PageContext } from '../app.ts';
import { h, notice, replace } from '../dom.ts';
import { timeElement } from '../time.ts';
import type { ClusterStatus as Status, DeadLetters } from '../../../src/contracts/admin-views.ts';

function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

function statusSection(status: Status): HTMLElement {
  const roles = Object.entries(status.roles).map(([role, count]) => h('li', { class: `badge ${count > 0 ? 'ok' : 'bad'}` }, `${role}: ${count} alive`));
  const head = h('tr', {}, ...['queue', 'waiting', 'active', 'delayed', 'failed', 'oldest waiting'].map((title) => h('th', { scope: 'col' }, title)));
  const rows = status.queues.map((queue) =>
    h(
      'tr',
      {},
      h('th', { scope: 'row' }, queue.queue),
      h('td', {}, queue.waiting),
      h('td', {}, queue.active),
      h('td', {}, queue.delayed),
      h('td', {}, queue.failed),
      h('td', {}, `${queue.oldest_waiting_seconds} s`),
    ),
  );
  const oldest = status.oldest_waiting_turn;
  return h(
    'section',
    { 'aria-labelledby': 'roles-title' },
    h('h2', { id: 'roles-title' }, 'Roles'),
    h('ul', { class: 'inline' }, ...roles),
    h('h2', {}, 'Queues'),
    h('div', { class: 'table-wrap' }, h('table', {}, h('thead', {}, head), h('tbody', {}, ...rows))),
    oldest
      ? h('p', {}, `Oldest waiting turn: ${oldest.waiting_seconds} s, `, h('a', { href: link('session', [oldest.session_id]) }, 'its session'))
      : h('p', { class: 'muted' }, 'No turn is waiting.'),
    h(
      'p',
      { class: 'muted' },
      `Given up: ${plural(status.dead_letters.deliveries ?? 0, 'delivery', 'deliveries')}, ${plural(status.dead_letters.reviews ?? 0, 'review')}, ${plural(status.dead_letters.cron_jobs ?? 0, 'paused cron job')}.`,
    ),
  );
}

type Act = (label: string, action: () => Promise<unknown>, confirm?: string) => void;

function deadLetterSection(letters: DeadLetters, act: Act): HTMLElement {
  const deliveries = letters.deliveries.map((row) =>
    h(
      'li',
      { class: 'card', 'data-dead-letter': row.id },
      h(
        'p',
        { class: 'meta' },
        h('span', { class: 'badge bad' }, 'delivery failed'),
        h('span', {}, `${row.platform} · ${row.source} · ${plural(row.attempts, 'attempt')}`),
        h('span', {}, 'failed ', timeElement(row.failed_at)),
      ),
      h('p', { class: 'text bad' }, row.reason ?? 'no reason recorded'),
      h('details', { class: 'fold' }, h('summary', {}, 'message'), h('pre', { class: 'text' }, row.text)),
      row.session_id ? h('p', {}, h('a', { href: link('session', [row.session_id]) }, 'its session')) : null,
      h(
        'div',
        { class: 'actions' },
        h('button', { type: 'button', on: { click: () => act('Retry queued.', () => api('POST', `/v1/admin/dead-letters/deliveries/${segment(row.id)}/retry`)) } }, 'Retry'),
        h(
          'button',
          {
            type: 'button',
            class: 'danger',
            on: { click: () => act('Discarded.', () => api('DELETE', `/v1/admin/dead-letters/deliveries/${segment(row.id)}`), 'Discard this failed delivery? It will not be sent.') },
          },
          'Discard',
        ),
      ),
    ),
  );
  const jobs = letters.jobs.map((job) =>
    h(
      'li',
      { class: 'card', 'data-dead-letter': job.id },
      h('p', { class: 'meta' }, h('span', { class: 'badge bad' }, job.queue), h('span', {}, job.state), h('span', {}, timeElement(job.created_at))),
      h('p', { class: 'text bad' }, job.reason),
      h('details', { class: 'fold' }, h('summary', {}, 'job data'), h('pre', { class: 'text' }, JSON.stringify(job.data, null, 2))),
      h('p', { class: 'muted' }, job.queue.startsWith('cron') ? 'To retry, resume or run the job on the Cron page.' : 'The review is recorded as failed; the next trigger starts a new one.'),
      h(
        'div',
        { class: 'actions' },
        h(
          'button',
          { type: 'button', class: 'danger', on: { click: () => act('Discarded.', () => api('DELETE', `/v1/admin/dead-letters/jobs/${segment(job.id)}`), 'Discard this dead letter?') } },
          'Discard',
        ),
      ),
    ),
  );
  return h(
    'section',
    { 'aria-labelledby': 'dead-title' },
    h('h2', { id: 'dead-title' }, 'Dead letters'),
    deliveries.length + jobs.length === 0 ? h('p', { class: 'muted' }, 'None: nothing was given up on.') : h('ul', { class: 'cards' }, ...deliveries, ...jobs),
  );
}

/** Which roles are alive, queue depths, the oldest waiting turn, and the dead letters with retry and discard. */
export async function runsPage(ctx: PageContext): Promise<void> {
  const status = h('div', { 'aria-live': 'polite' });
  const body = h('div');
  const draw = async () => {
    const [cluster, letters] = await Promise.all([api<Status>('GET', '/v1/admin/status'), api<DeadLetters>('GET', '/v1/admin/dead-letters')]);
    if (ctx.current()) replace(body, statusSection(cluster), deadLetterSection(letters, act));
  };
  const act: Act = (label, action, confirm) => {
    void (async () => {
      if (confirm !== undefined && !(await confirmAction(confirm))) return;
      try {
        await action();
        replace(status, notice(label));
        await draw();
      } catch (error) {
        replace(status, notice((error as Error).message, 'error'));
      }
    })();
  };
  replace(ctx.main, h('h1', {}, 'Runs and dead letters'), status, body);
  await draw();
  ctx.every(4000, draw);
}
