// A turn while it runs: the tool lines and the text as they stream, and what it waits on with
// buttons to answer. The chat page draws every turn with it; a session's transcript draws a running
// turn with it until the committed messages replace it.
import { api, segment } from './api.ts';
import { h, notice, replace } from './dom.ts';
import type { TurnEvent } from './turn-stream.ts';
import type { StreamEventData } from '../../src/contracts/message-views.ts';

type Waiting = StreamEventData['waiting'];

export interface TurnView {
  element: HTMLElement;
  /** Draws one streamed event. */
  show(event: TurnEvent): void;
}

export interface TurnViewOptions {
  /** Who answers a wait (the person whose turn asked); without it, waits are shown without buttons. */
  answerer?: () => string;
  /** Called with the committed reply when the turn ends. */
  done?: (reply: string) => void;
}

/** A button that answers a wait with `body`; the card then says what was answered. */
function answerButton(label: string, wait: Waiting, body: Record<string, string>, who: () => string, card: HTMLElement, kind = ''): HTMLButtonElement {
  const button = h('button', { type: 'button', class: kind, 'data-answer': label });
  button.textContent = label;
  button.addEventListener('click', () => void answer(wait, { ...body, user_id: who() }, card, label));
  return button;
}

async function answer(wait: Waiting, body: Record<string, string>, card: HTMLElement, label: string): Promise<void> {
  const actions = card.querySelector('.actions');
  for (const button of card.querySelectorAll('button')) button.disabled = true;
  try {
    await api('POST', `/v1/waits/${segment(wait.id)}`, body);
    card.dataset.answered = 'true';
    if (actions) replace(actions, h('p', { class: 'muted', role: 'status' }, `Answered: ${body.answer ?? label}`));
  } catch (error) {
    for (const button of card.querySelectorAll('button')) button.disabled = false;
    card.append(notice((error as Error).message, 'error'));
  }
}

function clarifyActions(wait: Waiting, who: () => string, card: HTMLElement): HTMLElement {
  const text = h('input', { type: 'text', name: 'answer', autocomplete: 'off', 'aria-label': 'Your answer' });
  const submit = (event: Event) => {
    event.preventDefault();
    if (text.value.trim() !== '') void answer(wait, { answer: text.value.trim(), user_id: who() }, card, text.value.trim());
  };
  return h(
    'form',
    { class: 'actions', on: { submit } },
    ...(wait.choices ?? []).map((choice) => answerButton(choice, wait, { answer: choice }, who, card)),
    text,
    h('button', { type: 'submit' }, 'Answer'),
  );
}

/** A card for an approval or a question; buttons when someone can answer from here. */
function waitCard(wait: Waiting, who: (() => string) | undefined): HTMLElement {
  const card = h('div', { class: 'card wait', 'data-wait': wait.id, role: 'group', 'aria-label': wait.kind === 'approval' ? 'Approval' : 'Question' });
  card.append(h('strong', {}, wait.kind === 'approval' ? `Approve ${wait.tool}?` : 'A question'), h('div', { class: 'text' }, wait.prompt));
  if (who === undefined) {
    card.append(h('p', { class: 'muted' }, wait.how_to_answer));
  } else if (wait.kind === 'approval') {
    card.append(
      h(
        'div',
        { class: 'actions' },
        answerButton('Approve once', wait, { decision: 'approve', scope: 'once' }, who, card, 'primary'),
        answerButton('Approve for this session', wait, { decision: 'approve', scope: 'session' }, who, card),
        answerButton('Deny', wait, { decision: 'deny' }, who, card, 'danger'),
      ),
    );
  } else {
    card.append(clarifyActions(wait, who, card));
  }
  return card;
}

/** Tool lines are updated in place: a call's start line takes its end status. */
function showTool(tools: HTMLElement, data: StreamEventData['tool']): void {
  const running = [...tools.querySelectorAll<HTMLElement>('li[data-status="start"]')].find((line) => line.dataset.tool === data.name);
  // A turn resumed after an approval starts the call it parked on again: still the one line.
  if (running && data.status === 'start') return;
  if (running) {
    running.dataset.status = data.status;
    replace(running, h('span', { class: 'tool-name' }, data.name), ` · ${data.status === 'end' ? 'done' : data.status}`);
    return;
  }
  tools.append(h('li', { 'data-tool': data.name, 'data-status': data.status }, h('span', { class: 'tool-name' }, data.name), data.status === 'start' ? ' · running…' : ` · ${data.status}`));
}

export function turnView(options: TurnViewOptions = {}): TurnView {
  const tools = h('ul', { class: 'tool-lines', 'aria-label': 'Tool calls' });
  const text = h('div', { class: 'text streamed' });
  const waits = h('div', { class: 'waits' });
  const status = h('div', { class: 'turn-status' });
  const element = h('div', { class: 'turn', 'data-state': 'running' }, tools, text, waits, status);
  const show = (event: TurnEvent) => {
    if (event.event === 'delta') text.append(event.data.text);
    else if (event.event === 'tool') showTool(tools, event.data);
    // A compression is one status line while it runs, gone when it ends.
    else if (event.event === 'compression') {
      if (event.data.status === 'start') replace(status, h('p', { class: 'muted', role: 'status' }, 'Compressing earlier messages…'));
      else replace(status);
    } else if (event.event === 'waiting') {
      if (!waits.querySelector(`[data-wait="${CSS.escape(event.data.id)}"]`)) waits.append(waitCard(event.data, options.answerer));
    } else if (event.event === 'done') {
      // The committed reply is the answer; the streamed pieces were only a view of it.
      text.textContent = event.data.reply.text;
      element.dataset.state = 'done';
      options.done?.(event.data.reply.text);
    } else {
      element.dataset.state = 'failed';
      replace(status, notice(event.data.message, 'error'));
    }
  };
  return { element, show };
}
