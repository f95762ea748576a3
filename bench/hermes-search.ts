import type { loadSqlite } from './sqlite.ts';
import type { SqliteDatabase } from './sqlite.ts';

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

/** Hermes' search_messages, reduced to what this corpus needs: FTS5, the trigram table, or LIKE. */
export class HermesSearch {
  readonly #db: SqliteDatabase;
  constructor(Database: Awaited<ReturnType<typeof loadSqlite>>, file: string) {
    this.#db = new Database(file, { readonly: true });
  }

  search(query: string, sort: 'relevance' | 'newest', userId: string): { sessions: string[]; route: string } {
    const order = sort === 'newest' ? 'm.timestamp DESC, rank' : 'rank';
    const tokens = query.match(/"[^"]*"|\S+/g) ?? [];
    const words = tokens.filter((t) => !['OR', 'AND', 'NOT'].includes(t));
    let rows: { session_id: string }[];
    let route: string;
    if (CJK.test(query)) {
      const cjkTokens = words.filter((t) => CJK.test(t));
      if (cjkTokens.every((t) => [...t.replace(/[^\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/gu, '')].length >= 3)) {
        const match = tokens.map((t) => (['OR', 'AND', 'NOT'].includes(t) ? t : `"${t.replace(/"/g, '')}"`)).join(' ');
        rows = this.#db
          .prepare(
            `SELECT m.session_id, snippet(messages_fts_trigram, 0, '>>>', '<<<', '...', 40) AS snippet
            FROM messages_fts_trigram JOIN messages m ON m.id = messages_fts_trigram.rowid JOIN sessions s ON s.id = m.session_id
            WHERE messages_fts_trigram MATCH ? AND s.user_id = ? ORDER BY ${order} LIMIT 300`,
          )
          .all(match, userId) as { session_id: string }[];
        route = 'trigram';
      } else {
        const like = words.map(() => '(m.content LIKE ? OR m.tool_name LIKE ? OR m.tool_calls LIKE ?)').join(' OR ');
        const params = words.flatMap((w) => [`%${w}%`, `%${w}%`, `%${w}%`]);
        rows = this.#db
          .prepare(
            `SELECT m.session_id, substr(m.content, max(1, instr(m.content, ?) - 60), 120) AS snippet
            FROM messages m JOIN sessions s ON s.id = m.session_id
            WHERE (${like}) AND s.user_id = ? ORDER BY m.timestamp DESC LIMIT 300`,
          )
          .all(words[0] ?? '', ...params, userId) as { session_id: string }[];
        route = 'like';
      }
    } else {
      rows = this.#db
        .prepare(
          `SELECT m.session_id, snippet(messages_fts, 0, '>>>', '<<<', '...', 40) AS snippet
          FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid JOIN sessions s ON s.id = m.session_id
          WHERE messages_fts MATCH ? AND s.user_id = ? ORDER BY ${order} LIMIT 300`,
        )
        .all(query, userId) as { session_id: string }[];
      route = 'fts5';
    }
    const sessions: string[] = [];
    for (const row of rows) {
      if (!sessions.includes(row.session_id)) sessions.push(row.session_id);
      if (sessions.length === 10) break;
    }
    return { sessions, route };
  }

  close(): void {
    this.#db.close();
  }
}
