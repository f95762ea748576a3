import { api, segment } from '../api.ts';
import { confirmAction, link } from '../app.ts';
import type { PageContext } from '../app.ts';
import { h, notice, replace } from '../dom.ts';
import { browserTimeZone, duration, formatTime, relative, timeElement } from '../time.ts';
import type { CronJobList, CronJobView as CronJob, CronRunList, CronRunView as CronRun } from '../../../src/contracts/cron-views.ts';

function nextFire(job: CronJob): HTMLElement {
  if (job.next_run_at === null) return h('span', { class: 'muted' }, job.enabled ? 'no further runs' : 'paused');
  const zone = job.timezone ?? 'UTC';
  return h(
    'span',
    { class: 'next' },
    timeElement(job.next_run_at),
    ` (${browserTimeZone()}, ${relative(job.next_run_at)})`,
    zone === browserTimeZone() ? null : h('span', { class: 'muted' }, ` · ${formatTime(job.next_run_at, zone)} in ${zone}`),
  );
}

function deliveryText(delivery: CronRun['deliveries'][number]): string {
  const target = typeof delivery.target === 'string' ? delivery.target : JSON.stringify(delivery.target);
  return `${target}: ${delivery.status}${delivery.attempts > 1 ? ` after ${delivery.attempts} attempts` : ''}${delivery.error ? ` (${delivery.error})` : ''}`;
}

function runRow(run: CronRun): HTMLElement {
  const badge = run.status === 'succeeded' || run.status === 'done' ? 'ok' : run.status === 'failed' ? 'bad' : 'muted';
  return h(
    'li',
    { class: 'run' },
    h('span', { class: `badge ${badge}` }, run.status),
    ` ${run.trigger} · `,
    timeElement(run.started_at ?? run.scheduled_for),
    ` · ${duration(run.duration_ms)}`,
    run.session_id ? h('span', {}, ' · ', h('a', { href: link('session', [run.session_id]) }, 'session')) : null,
    run.error ? h('div', { class: 'text bad' }, run.error) : null,
    run.deliveries.length > 0 ? h('ul', { class: 'plain deliveries' }, ...run.deliveries.map((delivery) => h('li', {}, deliveryText(delivery)))) : h('div', { class: 'muted' }, 'no delivery'),
  );
}

function jobCard(job: CronJob, runs: CronRun[], act: (job: CronJob, action: 'pause' | 'resume' | 'run') => void): HTMLElement {
  const title = job.name ?? job.prompt.slice(0, 60);
  return h(
    'li',
    { class: 'card', 'data-job': job.job_id },
    h('h2', {}, title),
    h(
      'p',
      { class: 'meta' },
      h('span', { class: 'mono' }, job.schedule),
      h('span', {}, `zone ${job.timezone ?? 'UTC'}`),
      h('span', {}, `owner ${job.user_id}`),
      h('span', { class: `badge ${job.enabled ? 'ok' : 'warn'}` }, job.state),
    ),
    job.paused_reason ? notice(job.paused_reason, 'error') : null,
    h('p', {}, 'Next fire: ', nextFire(job)),
    h('details', { class: 'fold' }, h('summary', {}, 'prompt'), h('pre', { class: 'text' }, job.prompt)),
    h(
      'div',
      { class: 'actions' },
      job.enabled
        ? h('button', { type: 'button', class: 'danger', on: { click: () => act(job, 'pause') } }, 'Pause')
        : h('button', { type: 'button', on: { click: () => act(job, 'resume') } }, 'Resume'),
      h('button', { type: 'button', on: { click: () => act(job, 'run') } }, 'Run now'),
      h('a', { href: link('cron', ['edit', job.job_id]), class: 'button' }, 'Edit'),
    ),
    h('h3', {}, 'Last runs'),
    runs.length === 0 ? h('p', { class: 'muted' }, 'No runs yet.') : h('ul', { class: 'plain runs' }, ...runs.map(runRow)),
  );
}

/** Cron jobs: next fire in the browser's zone and the job's own, the last runs and their deliveries; pause, resume, run now. */
export async function cronPage(ctx: PageContext): Promise<void> {
  // The editor (#/cron/new, #/cron/edit/<id>) loads on first use.
  if (ctx.route.parts[0] === 'new' || ctx.route.parts[0] === 'edit') return (await import('./cron-editor.ts')).cronEditorPage(ctx);
  const list = h('ol', { class: 'cards', 'aria-label': 'Cron jobs' });
  const status = h('div', { 'aria-live': 'polite' });
  const draw = async () => {
    const { jobs } = await api<CronJobList>('GET', '/v1/cron/jobs');
    const runs = await Promise.all(jobs.map((job) => api<CronRunList>('GET', `/v1/cron/jobs/${segment(job.job_id)}/runs?limit=5`)));
    if (!ctx.current()) return;
    replace(list, ...jobs.map((job, index) => jobCard(job, runs[index]?.runs ?? [], (target, action) => void act(target, action))));
    if (jobs.length === 0) replace(status, notice('No cron jobs yet. Create one here, in chat, with herald cron, or POST /v1/cron/jobs.'));
  };
  const act = async (job: CronJob, action: 'pause' | 'resume' | 'run') => {
    const path = `/v1/cron/jobs/${segment(job.job_id)}`;
    try {
      if (action === 'pause') {
        if (!(await confirmAction(`Pause ${job.name ?? 'this job'}?`, 'It stops firing until resumed.'))) return;
        await api('PATCH', path, { enabled: false });
      } else if (action === 'resume') {
        await api('PATCH', path, { enabled: true });
      } else {
        await api('POST', `${path}/run`);
      }
      replace(status, notice(action === 'run' ? 'Run started.' : action === 'pause' ? 'Paused.' : 'Resumed.'));
      await draw();
    } catch (error) {
      replace(status, notice((error as Error).message, 'error'));
    }
  };
  const saved = ctx.route.params.get('saved');
  if (saved) replace(status, notice('Saved.'));
  const create = h('p', {}, h('a', { href: link('cron', ['new']), class: 'button primary' }, 'New job'));
  replace(ctx.main, h('h1', {}, 'Cron'), h('p', { class: 'muted' }, `Times in your zone (${browserTimeZone()}); a job's own zone beside it.`), create, status, list);
  await draw();
  ctx.every(10_000, draw);
}
