import type { Config, Logger } from '@herald/core';
import type { Db } from '@herald/db';
import type { RunQueue } from '@herald/queue';
import { postInternalEvent } from '@herald/inbox';
import { BackgroundProcesses } from '@herald/tools';
import type { BackgroundProcess, ExitNotice } from '@herald/tools';
import { wakeSessions } from '@herald/worker';

function exitText(notice: ExitNotice): string {
  const how = notice.reason !== null ? `was ended (${notice.reason})` : notice.exitCode !== null ? `finished (exit code ${notice.exitCode})` : `was killed by ${notice.signal ?? 'a signal'}`;
  const tail = notice.tail.trimEnd() === '' ? '(no output)' : notice.tail.trimEnd();
  return `[Background process ${notice.processId} ${how}.\nCommand: ${notice.command.slice(0, 500)}\nOutput (the end):\n${tail}]`;
}

function stoppedText(ended: readonly BackgroundProcess[]): string {
  const list = ended.map((entry) => `${entry.id} (${entry.command.slice(0, 120)})`).join(', ');
  return `[The worker running this session's background processes stopped, so they were ended: ${list}. Start them again with process if they are still needed.]`;
}

/**
 * The worker's background processes, wired to the session inbox: an exit with notify_on_exit and
 * the worker's stop are posted as internal events (durable, deduplicated) and the session is
 * woken. The caller stops them at shutdown while Postgres and the run queue are still open.
 */
export function openBackgroundProcesses(config: Config, db: Db, log: Logger, queue: () => RunQueue): BackgroundProcesses {
  const post = async (sessionId: string, userId: string, dedupeKey: string, text: string) => {
    if (await postInternalEvent(db, { sessionId, userId, userName: 'process', dedupeKey, text })) await wakeSessions(db, queue(), [sessionId], log);
  };
  const processes = new BackgroundProcesses({
    settings: config.tools.processes,
    notify: (notice) =>
      post(notice.sessionId, notice.userId, `process-exit:${notice.processId}`, exitText(notice)).catch((error: unknown) => {
        log.warn({ err: error, sessionId: notice.sessionId, processId: notice.processId }, 'could not post a background process exit');
      }),
    notifyStopped: (sessionId, ended) =>
      post(
        sessionId,
        ended[0]!.userId,
        `process-stopped:${ended
          .map((e) => e.id)
          .sort()
          .join(',')}`,
        stoppedText(ended),
      ).catch((error: unknown) => {
        log.warn({ err: error, sessionId }, 'could not tell a session its background processes ended');
      }),
  });
  return processes;
}
