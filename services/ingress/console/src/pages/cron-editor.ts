import { api, ApiError, query, segment } from '../api.ts';
import { go, link } from '../app.ts';
import type { PageContext } from '../app.ts';
import { h, input, notice, replace, select } from '../dom.ts';
import { browserTimeZone, formatInZone } from '../time.ts';
import { personInput } from '../people.ts';
import type { CronJobView, CronPreview } from '../../../src/contracts/cron-views.ts';
import type { ProfileList } from '../../../src/contracts/profile-views.ts';

type Control = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;

/** The editor's fields by the API's names, so an error's `field` finds its control. */
interface Controls {
  name: HTMLInputElement;
  profile: HTMLSelectElement;
  user_id: HTMLInputElement;
  schedule: HTMLInputElement;
  timezone: HTMLInputElement;
  deliver: HTMLInputElement;
  prompt: HTMLTextAreaElement;
}

const PREVIEW_DELAY_MS = 250;

/** A labelled control with its hint and a place for the API's error about it, tied by aria-describedby. */
function editorField(label: string, name: string, control: Control, hint = ''): HTMLElement {
  control.id = `cron-${name}`;
  const error = h('p', { class: 'field-error', id: `cron-${name}-error`, role: 'alert', hidden: true });
  const help = hint ? h('p', { class: 'muted hint', id: `cron-${name}-hint` }, hint) : null;
  control.setAttribute('aria-describedby', [help ? help.id : '', error.id].filter(Boolean).join(' '));
  return h('div', { class: 'field', 'data-field': name }, h('label', { for: control.id }, label), control, help, error);
}

function showFieldError(name: string, message: string | null): void {
  const error = document.getElementById(`cron-${name}-error`);
  const control = document.getElementById(`cron-${name}`);
  if (!error || !control) return;
  error.textContent = message ?? '';
  error.hidden = message === null;
  if (message === null) control.removeAttribute('aria-invalid');
  else control.setAttribute('aria-invalid', 'true');
}

function timeZoneList(): HTMLDataListElement {
  const list = h('datalist', { id: 'time-zones' });
  for (const zone of Intl.supportedValuesOf('timeZone')) list.append(h('option', { value: zone }));
  return list;
}

function controlsFor(job: CronJobView | undefined, profiles: string[]): Controls {
  const prompt = h('textarea', { name: 'prompt', rows: '5', required: true });
  prompt.value = job?.prompt ?? '';
  const profile = select(
    'profile',
    profiles.map((name) => [name, name] as const),
    job?.profile ?? 'main',
  );
  profile.disabled = job !== undefined;
  const owner = personInput('user_id', job?.user_id ?? localStorage.getItem('herald.console.user') ?? 'console');
  owner.disabled = job !== undefined;
  return {
    name: input('name', job?.name ?? ''),
    profile,
    user_id: owner,
    schedule: input('schedule', job?.schedule ?? '', { required: true, placeholder: '0 9 * * 1-5' }),
    timezone: input('timezone', job?.timezone ?? browserTimeZone(), { list: 'time-zones', required: true }),
    deliver: input('deliver', job?.deliver.join(', ') ?? '', { placeholder: 'local, <platform>:<chat id>, webhook:https://…' }),
    prompt,
  };
}

/** The next five runs, computed by the server with the scheduler's parser, shown in the job's zone. */
function previewer(controls: Controls, list: HTMLElement): () => void {
  let asked = 0;
  let timer = 0;
  const run = async () => {
    const mine = ++asked;
    const schedule = controls.schedule.value.trim();
    if (schedule === '') return replace(list, h('li', { class: 'muted' }, 'Write a schedule to see its next runs.'));
    try {
      const preview = await api<CronPreview>('GET', `/v1/cron/preview${query({ schedule, timezone: controls.timezone.value.trim(), count: 5 })}`);
      if (mine !== asked) return;
      showFieldError('schedule', null);
      showFieldError('timezone', null);
      const title = document.getElementById('preview-title');
      if (title) title.textContent = `Next five runs, in ${preview.timezone}`;
      const local = browserTimeZone();
      replace(
        list,
        ...preview.runs.map((run) =>
          h(
            'li',
            { 'data-run': run },
            h('time', { datetime: run }, formatInZone(run, preview.timezone)),
            preview.timezone === local ? null : h('span', { class: 'muted' }, ` · ${formatInZone(run, local)} in ${local}`),
          ),
        ),
      );
      if (preview.runs.length === 0) replace(list, h('li', { class: 'muted' }, 'No further runs.'));
    } catch (error) {
      if (mine !== asked) return;
      replace(list);
      if (error instanceof ApiError && error.field) showFieldError(error.field, error.message);
    }
  };
  return () => {
    clearTimeout(timer);
    timer = window.setTimeout(() => void run(), PREVIEW_DELAY_MS);
  };
}

function bodyOf(controls: Controls, job: CronJobView | undefined): Record<string, unknown> {
  const common = {
    name: controls.name.value.trim() || undefined,
    schedule: controls.schedule.value.trim(),
    timezone: controls.timezone.value.trim(),
    prompt: controls.prompt.value,
  };
  const deliver = controls.deliver.value.trim();
  if (job) return { ...common, deliver };
  return { ...common, profile: controls.profile.value, user_id: controls.user_id.value.trim(), ...(deliver === '' ? {} : { deliver }) };
}

async function save(controls: Controls, job: CronJobView | undefined, status: HTMLElement): Promise<void> {
  for (const name of Object.keys(controls)) showFieldError(name, null);
  replace(status);
  try {
    const saved = job ? await api<CronJobView>('PATCH', `/v1/cron/jobs/${segment(job.job_id)}`, bodyOf(controls, job)) : await api<CronJobView>('POST', '/v1/cron/jobs', bodyOf(controls, job));
    go(link('cron', [], { saved: saved.job_id }));
  } catch (error) {
    const field = error instanceof ApiError ? error.field : undefined;
    if (field && field in controls) {
      showFieldError(field, (error as Error).message);
      controls[field as keyof Controls].focus();
    } else {
      replace(status, notice((error as Error).message, 'error'));
    }
  }
}

/** Creates a cron job (#/cron/new) or edits one (#/cron/edit/<id>), previewing its next runs as the schedule is typed. */
export async function cronEditorPage(ctx: PageContext): Promise<void> {
  const id = ctx.route.parts[0] === 'edit' ? ctx.route.parts[1] : undefined;
  const [job, { profiles }] = await Promise.all([id === undefined ? Promise.resolve(undefined) : api<CronJobView>('GET', `/v1/cron/jobs/${segment(id)}`), api<ProfileList>('GET', '/v1/profiles')]);
  if (!ctx.current()) return;
  const controls = controlsFor(
    job,
    profiles.map((profile) => profile.profile),
  );
  const runs = h('ol', { class: 'preview', 'aria-label': 'Next runs', 'aria-live': 'polite' });
  const refresh = previewer(controls, runs);
  controls.schedule.addEventListener('input', refresh);
  controls.timezone.addEventListener('input', refresh);
  const status = h('div', { 'aria-live': 'polite' });
  const submit = (event: Event) => {
    event.preventDefault();
    void save(controls, job, status);
  };
  const form = h(
    'form',
    { class: 'card cron-editor', novalidate: true, on: { submit } },
    editorField('Name', 'name', controls.name),
    editorField('Profile', 'profile', controls.profile),
    editorField('Owner', 'user_id', controls.user_id, 'Whose job it is: it may report to the chats this person is in.'),
    editorField('Schedule', 'schedule', controls.schedule, "A cron expression ('0 9 * * 1-5'), an interval ('every 2h'), a delay ('in 30m') or a time ('2026-12-24T18:00')."),
    editorField('Time zone', 'timezone', controls.timezone, 'An IANA zone; the schedule is read in it.'),
    h('section', { class: 'preview-box', 'aria-labelledby': 'preview-title' }, h('h2', { id: 'preview-title' }, 'Next five runs'), runs),
    editorField('Deliver to', 'deliver', controls.deliver, "Comma-separated targets: 'local' keeps the output only; a chat as platform:chat_id; webhook:https://…"),
    editorField('Prompt', 'prompt', controls.prompt, 'What the agent is asked at each run.'),
    status,
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, job ? 'Save changes' : 'Create job'), h('a', { href: link('cron'), class: 'button' }, 'Cancel')),
  );
  replace(ctx.main, h('p', {}, h('a', { href: link('cron') }, '← Cron')), h('h1', {}, job ? `Edit ${job.name}` : 'New cron job'), form, timeZoneList());
  refresh();
  (job ? controls.schedule : controls.name).focus();
}
