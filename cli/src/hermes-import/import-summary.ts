import type { CronReport } from './import-cron.ts';
import type { HistoryReport } from './import-history.ts';
import type { KnowledgeReport, Skipped } from './import-knowledge.ts';

/** Per kind of thing imported: how many came in, how many were there already, how many were skipped and why. */
export type ImportSummary = Record<'sessions' | 'messages' | 'memory' | 'skills' | 'cron', { imported: number; unchanged: number; skipped: number; skippedWhy: Record<string, number> }>;

/** The reasons of named skips, counted: each item itself is listed by path in its part of the report. */
function reasons(skipped: Skipped[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of skipped) {
    // The reason without the path or entry that starts it, so like reasons add up.
    const why = item.why.startsWith('/') ? item.why.replace(/^\S+:\s*/, '') : item.why;
    counts[why] = (counts[why] ?? 0) + 1;
  }
  return counts;
}

export function summarise(history: HistoryReport | null, knowledge: KnowledgeReport, cron: CronReport): ImportSummary {
  const skippedMessages = history === null ? {} : history.messages.skipped;
  return {
    sessions: { imported: history?.sessions.imported ?? 0, unchanged: history?.sessions.alreadyThere ?? 0, skipped: 0, skippedWhy: {} },
    messages: {
      imported: history?.messages.imported ?? 0,
      unchanged: history?.messages.alreadyThere ?? 0,
      skipped: Object.values(skippedMessages).reduce((sum, n) => sum + n, 0),
      skippedWhy: skippedMessages,
    },
    memory: { imported: knowledge.memory.imported, unchanged: knowledge.memory.alreadyThere, skipped: knowledge.memory.skipped.length, skippedWhy: reasons(knowledge.memory.skipped) },
    skills: { imported: knowledge.skills.imported.length, unchanged: knowledge.skills.alreadyThere.length, skipped: knowledge.skills.skipped.length, skippedWhy: reasons(knowledge.skills.skipped) },
    cron: { imported: cron.imported.length, unchanged: cron.alreadyThere.length, skipped: cron.skipped.length, skippedWhy: reasons(cron.skipped) },
  };
}
