import { isUuid } from '@herald/core';
import { getWait } from '@herald/waits';
import type { Db } from '@herald/db';

export interface WaitButton {
  text: string;
  data: string;
}

/** Buttons stored on an outbox row as JSON text (`[{text, data}]`); anything malformed is dropped. */
export function parseWaitButtons(raw: string | undefined): WaitButton[] {
  if (raw === undefined) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return [];
  }
  if (!Array.isArray(parsed)) return [];
  return parsed.filter((b): b is WaitButton => typeof b?.text === 'string' && typeof b?.data === 'string');
}

/**
 * What pressing a button means, as the chat message a person could have typed: /approve,
 * /approve session, /deny, or the text of the chosen answer. Undefined for a stale or foreign button.
 */
export async function buttonChatText(db: Db, data: string): Promise<string | undefined> {
  const match = /^hw:([^:]{1,64}):(once|session|deny|\d{1,2})$/.exec(data);
  // Anyone can send any callback data: a malformed id is a foreign button, not a database error.
  if (!match?.[1] || !match[2] || !isUuid(match[1])) return undefined;
  if (match[2] === 'once') return '/approve';
  if (match[2] === 'session') return '/approve session';
  if (match[2] === 'deny') return '/deny';
  const wait = await getWait(db, match[1]);
  return wait?.kind === 'clarify' && wait.status === 'pending' ? wait.choices?.[Number(match[2])] : undefined;
}
