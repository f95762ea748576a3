import { pastMessagesMatching } from '@herald/session';
import type { Db } from '@herald/db';
import type { ChatMessage } from './types.ts';

export interface RecallQuery {
  profileId: string;
  userId: string;
  sessionId: string;
  text: string;
}

/**
 * Per-turn recall. Results go next to the current user message, never into the system prompt, so
 * the cached prefix stays intact whatever is recalled.
 */
export interface RecallProvider {
  readonly name: string;
  recall(query: RecallQuery): Promise<string[]>;
}

/** Adds a `<memory-context>` block to the last user message of the request (not to the transcript). */
export function withRecall(history: ChatMessage[], snippets: string[]): ChatMessage[] {
  if (snippets.length === 0) return history;
  let index = -1;
  for (let i = history.length - 1; i >= 0; i--) {
    if (history[i]?.role === 'user') {
      index = i;
      break;
    }
  }
  const target = history[index];
  if (index === -1 || target?.role !== 'user') return history;
  const block = `<memory-context>\nPossibly relevant, from earlier conversations with this person:\n${snippets.map((snippet) => `- ${snippet}`).join('\n')}\n</memory-context>`;
  const copy = [...history];
  copy[index] = { role: 'user', content: `${target.content}\n\n${block}` };
  return copy;
}

const SNIPPET_CHARS = 300;

/** The terms worth matching: longer words first, CJK runs as they are. */
export function recallTerms(text: string, max = 5): string[] {
  const words = text.toLowerCase().match(/[\p{L}\p{N}_-]{4,}/gu) ?? [];
  const cjk = text.match(/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]{2,}/gu) ?? [];
  return [...new Set([...cjk, ...words])].sort((a, b) => b.length - a.length).slice(0, max);
}

/**
 * Recalls from the person's own past sessions in this profile by plain matching on their words.
 * It never looks at other people's sessions.
 */
export class PastSessionsRecall implements RecallProvider {
  readonly name = 'past-sessions';
  readonly #db: Db;
  readonly #limit: number;

  constructor(db: Db, limit = 3) {
    this.#db = db;
    this.#limit = limit;
  }

  async recall(query: RecallQuery): Promise<string[]> {
    const terms = recallTerms(query.text);
    if (terms.length === 0) return [];
    const rows = await pastMessagesMatching(this.#db, { profileId: query.profileId, userId: query.userId, excludeSessionId: query.sessionId, terms, limit: this.#limit });
    return rows.map((row) => {
      const text = row.content.length > SNIPPET_CHARS ? `${row.content.slice(0, SNIPPET_CHARS)}...` : row.content;
      return `${row.created_at.toISOString().slice(0, 10)} ${row.role}: ${text.replace(/\s+/g, ' ')}`;
    });
  }
}
