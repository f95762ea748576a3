import type { WaitButton } from '@herald/inbox';
import type { WaitRequest } from '@herald/tools';

/** Telegram's callback_data holds at most 64 bytes: a prefix, the wait id and a short choice. */
export const APPROVE_BUTTON = (waitId: string, scope: 'once' | 'session' | 'deny'): string => `hw:${waitId}:${scope}`;
export const CHOICE_BUTTON = (waitId: string, index: number): string => `hw:${waitId}:${index}`;

function shortArguments(json: string): string {
  const compact = json.length > 300 ? `${json.slice(0, 300)}…` : json;
  return compact;
}

/** What the person reads in their chat while the turn is parked, and the buttons under it. */
export function waitNotice(request: WaitRequest): { text: string; buttons: WaitButton[] } | null {
  // Parked on child runs: nobody is asked anything; the last child's end resumes the turn.
  if (request.kind === 'subagents') return null;
  if (request.kind === 'approval') {
    return {
      text:
        `Approval needed: ${request.prompt}\n\n` +
        `\`${request.toolName}\` ${shortArguments(request.arguments)}\n\n` +
        'Reply /approve, /approve session (allow this kind of call for the rest of the session) or /deny [reason].',
      buttons: [
        { text: 'Approve', data: APPROVE_BUTTON(request.id, 'once') },
        { text: 'Allow for session', data: APPROVE_BUTTON(request.id, 'session') },
        { text: 'Deny', data: APPROVE_BUTTON(request.id, 'deny') },
      ],
    };
  }
  const choices = request.choices ?? [];
  return {
    text: choices.length > 0 ? `${request.prompt}\n\n${choices.map((c, i) => `${i + 1}. ${c}`).join('\n')}` : request.prompt,
    buttons: choices.map((choice, index) => ({ text: choice.slice(0, 60), data: CHOICE_BUTTON(request.id, index) })),
  };
}
