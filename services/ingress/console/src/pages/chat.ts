import { api, ApiError, openStream, query, segment } from '../api.ts';
import { go, link } from '../app.ts';
import type { PageContext } from '../app.ts';
import { field, h, input, notice, replace, select } from '../dom.ts';
import { followEvent, followTurn } from '../turn-stream.ts';
import { turnView } from '../turn-view.ts';
import { attachmentList } from '../attachments-view.ts';
import type { TranscriptMessage, TranscriptPage } from '../../../src/contracts/session-views.ts';
import type { MessageAnswer, OpenEventList } from '../../../src/contracts/message-views.ts';
import type { ProfileList } from '../../../src/contracts/profile-views.ts';

// Who writes from this browser: kept across visits (it is a name, not a secret; the token is not here).
const WHO_KEY = 'herald.console.user';
const DEFAULT_WHO = 'console';

/** A new conversation's chat id: the API keys a conversation by its chat (and profile). */
function newChatId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(6));
  return `console-${[...bytes].map((byte) => byte.toString(16).padStart(2, '0')).join('')}`;
}

function bubble(role: 'user' | 'assistant', ...children: HTMLElement[]): HTMLElement {
  return h('li', { class: `chat-msg ${role}` }, h('span', { class: `role ${role}` }, role === 'user' ? 'you' : 'agent'), ...children);
}

/** The conversation so far, from the stored transcript: what was said, the files sent, and each tool called. */
function historyItems(sessionId: string, messages: TranscriptMessage[]): HTMLElement[] {
  const items: HTMLElement[] = [];
  for (const message of messages) {
    const files = attachmentList(sessionId, message.attachments);
    if (message.role === 'user') items.push(bubble('user', h('div', { class: 'text' }, message.content), ...(files === null ? [] : [files])));
    if (message.role !== 'assistant') continue;
    const calls = (message.tool_calls ?? []).map((call) => h('li', { 'data-tool': call.name, 'data-status': 'end' }, h('span', { class: 'tool-name' }, call.name), ' · done'));
    if (calls.length > 0) items.push(bubble('assistant', h('ul', { class: 'tool-lines' }, ...calls)));
    if (message.content !== '') items.push(bubble('assistant', h('div', { class: 'text' }, message.content)));
  }
  return items;
}

interface ChatState {
  profile: string;
  chat: string;
  session: string | undefined;
}

function stateOf(ctx: PageContext): ChatState {
  const params = ctx.route.params;
  return { profile: params.get('profile') || 'main', chat: params.get('chat') || newChatId(), session: params.get('session') ?? undefined };
}

/** The link of this conversation, so a reload or a shared tab continues it. */
function remember(state: ChatState): void {
  history.replaceState(null, '', link('chat', [], { profile: state.profile, chat: state.chat, session: state.session }));
}

async function loadHistory(ctx: PageContext, state: ChatState, log: HTMLElement, who: () => string): Promise<void> {
  if (state.session === undefined) return;
  const page = await api<TranscriptPage>('GET', `/v1/sessions/${segment(state.session)}/messages${query({ limit: 100 })}`);
  if (!ctx.current()) return;
  log.append(...historyItems(state.session, page.messages));
  // A turn still running (the page was reloaded mid-answer) is followed to its end.
  const { events } = await api<OpenEventList>('GET', `/v1/sessions/${segment(state.session)}/open-events`);
  const running = events.at(-1);
  if (running === undefined) return;
  const view = turnView({ answerer: who });
  log.append(bubble('assistant', view.element));
  await followEvent(running.event_id, { event: view.show }, ctx.signal);
}

interface Composer {
  form: HTMLFormElement;
  text: HTMLTextAreaElement;
  send: HTMLButtonElement;
  stop: HTMLButtonElement;
}

function composer(onSend: (text: string) => void, onStop: () => void): Composer {
  const text = h('textarea', { id: 'chat-text', name: 'text', placeholder: 'Write a message (Enter sends, Shift+Enter a new line)', 'aria-label': 'Message', rows: '3' });
  const send = h('button', { type: 'submit', class: 'primary' }, 'Send');
  const stop = h('button', { type: 'button', class: 'danger', hidden: true, on: { click: onStop } }, 'Stop');
  const submit = (event: Event) => {
    event.preventDefault();
    if (send.disabled || text.value.trim() === '') return;
    onSend(text.value);
  };
  text.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) submit(event);
  });
  const form = h('form', { class: 'composer', on: { submit } }, text, send, stop);
  return { form, text, send, stop };
}

// After /stop, the stopped turn's stream normally ends by itself; past this it is let go.
const STOP_GRACE_MS = 5000;

/** `/stop` as a message of this conversation (the chat command every channel has); its answer is shown. */
async function stopTurn(state: ChatState, log: HTMLElement, who: () => string, running: AbortController): Promise<void> {
  const timer = window.setTimeout(() => running.abort(), STOP_GRACE_MS);
  running.signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
  try {
    const answer = await api<MessageAnswer>('POST', '/v1/messages?wait=10', { chat_id: state.chat, user_id: who(), text: '/stop', profile: state.profile });
    const reply = 'reply' in answer ? answer.reply?.text : undefined;
    log.append(bubble('assistant', h('div', { class: 'text muted', role: 'status' }, reply ?? 'Stop sent.')));
  } catch (error) {
    log.append(notice((error as Error).message, 'error'));
  }
}

/** Sends one message and draws its turn as it streams, until done or an error. */
async function sendMessage(ctx: PageContext, state: ChatState, log: HTMLElement, text: string, who: () => string, signal: AbortSignal): Promise<void> {
  log.append(bubble('user', h('div', { class: 'text' }, text)));
  const view = turnView({ answerer: who });
  const reply = bubble('assistant', view.element);
  log.append(reply);
  reply.scrollIntoView({ block: 'end' });
  const body = { chat_id: state.chat, user_id: who(), text, profile: state.profile };
  try {
    await followTurn(
      () => openStream('POST', '/v1/messages', { body, signal }),
      {
        opened: ({ sessionId }) => {
          if (sessionId === '' || state.session === sessionId) return;
          state.session = sessionId;
          remember(state);
        },
        event: (event) => {
          view.show(event);
          if (event.event === 'delta' || event.event === 'done') reply.scrollIntoView({ block: 'end' });
        },
      },
      signal,
    );
    // Let go after a stop: the turn's stored messages say how far it got.
    if (signal.aborted && !ctx.signal.aborted) view.show({ event: 'error', data: { code: 'stopped', message: 'Stopped.' } });
  } catch (error) {
    if (signal.aborted) return;
    const message = error instanceof ApiError ? error.message : `Could not reach Herald: ${(error as Error).message}`;
    view.show({ event: 'error', data: { code: error instanceof ApiError ? error.code : 'unavailable', message } });
  }
}

/** Chat with a profile: the answer streams in with its tool calls; approvals and questions get buttons. */
export async function chatPage(ctx: PageContext): Promise<void> {
  const state = stateOf(ctx);
  const { profiles } = await api<ProfileList>('GET', '/v1/profiles');
  if (!ctx.current()) return;
  remember(state);
  const profile = select(
    'profile',
    profiles.map((entry) => [entry.profile, entry.display_name && entry.display_name !== entry.profile ? `${entry.profile} · ${entry.display_name}` : entry.profile] as const),
    state.profile,
  );
  const whoInput = input('user_id', localStorage.getItem(WHO_KEY) ?? DEFAULT_WHO, { required: true });
  const who = () => whoInput.value.trim() || DEFAULT_WHO;
  whoInput.addEventListener('change', () => localStorage.setItem(WHO_KEY, who()));
  // Another profile is another conversation.
  profile.addEventListener('change', () => go(link('chat', [], { profile: profile.value, chat: newChatId() })));
  const fresh = h('button', { type: 'button', on: { click: () => go(link('chat', [], { profile: state.profile, chat: newChatId() })) } }, 'New conversation');
  const log = h('ol', { class: 'chat-log', 'aria-label': 'Conversation', 'aria-live': 'polite' });
  let running: AbortController | undefined;
  const send = (text: string) => {
    const turn = new AbortController();
    running = turn;
    ctx.signal.addEventListener('abort', () => turn.abort(), { once: true });
    box.text.value = '';
    box.send.disabled = true;
    box.stop.hidden = false;
    box.stop.disabled = false;
    void sendMessage(ctx, state, log, text, who, turn.signal).finally(() => {
      running = undefined;
      box.send.disabled = false;
      box.stop.hidden = true;
      if (ctx.current()) box.text.focus();
    });
  };
  const box = composer(send, () => {
    if (running === undefined) return;
    box.stop.disabled = true;
    void stopTurn(state, log, who, running);
  });
  const session = state.session ? h('a', { href: link('session', [state.session]) }, 'this conversation’s session') : null;
  replace(
    ctx.main,
    h('h1', {}, 'Chat'),
    h('div', { class: 'filters chat-setup' }, field('Profile', profile), field('You are', whoInput), fresh),
    h('p', { class: 'muted' }, `Conversation ${state.chat}`, session ? ' · ' : '', session),
    log,
    box.form,
  );
  box.text.focus();
  try {
    await loadHistory(ctx, state, log, who);
  } catch (error) {
    if (ctx.current()) log.before(notice((error as Error).message, 'error'));
  }
}
