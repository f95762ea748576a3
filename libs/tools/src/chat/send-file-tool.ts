import { basename } from 'node:path';
import { z } from 'zod';
import { AttachmentRefusedError, megabytes, putBlob, safeFileName, sizeText, sniffType } from '@herald/attachments';
import { attachRunFile } from '@herald/cron';
import { enqueueSessionFile } from '@herald/session';
import { defineTool } from '../shared/tool.ts';
import type { Tool } from '../shared/tool.ts';
import { openFileInside } from '../files/workspace-files.ts';
import { resolveWorkspacePath } from '../files/workspace-paths.ts';

const sendFileArgs = z.object({
  path: z.string().min(1).describe('File path, relative to the workspace'),
  caption: z.string().max(4000).optional().describe('Text sent with the file'),
});

/** Reads a workspace file whole, refusing one over the cap before reading it. */
async function readWorkspaceFile(workspaceDir: string, path: string, maxBytes: number): Promise<{ name: string; bytes: Buffer }> {
  const target = await resolveWorkspacePath(workspaceDir, path);
  const { handle, size } = await openFileInside(target);
  try {
    const name = safeFileName(basename(target.absolute), 'file');
    if (size > maxBytes) throw new AttachmentRefusedError(`${target.display} is ${megabytes(size)}, over the ${megabytes(maxBytes)} files may be (HERALD_MAX_ATTACHMENT_MB)`);
    return { name, bytes: await handle.readFile() };
  } finally {
    await handle.close();
  }
}

/**
 * `send_file`: a file from the workspace (a chart, a CSV, a report) to the person's chat, as the
 * platform's photo or document message, through the outbox (receipts and retries like a reply).
 */
export function createSendFileTool(options: { maxBytes: number }): Tool {
  return defineTool({
    name: 'send_file',
    toolset: 'media',
    description: "Send a file from the workspace to the chat (an image as a photo, anything else as a document); in a scheduled job's run, attach it to the run's report.",
    guidance: 'To give the person a file you made (a chart, a CSV), save it in the workspace and call send_file.',
    schema: sendFileArgs,
    // The outbox row is keyed by the call: a re-run queues nothing twice.
    replaySafe: true,
    async execute(args, context) {
      const { name, bytes } = await readWorkspaceFile(context.workspaceDir, args.path, options.maxBytes);
      const { mime } = await sniffType(bytes, name);
      const sha256 = await putBlob(context.db, bytes, mime);
      const file = { sha256, name, mime, size: bytes.length };
      const queued = await enqueueSessionFile(context.db, {
        sessionId: context.sessionId,
        idempotencyKey: `file:${context.turnId}:${context.toolCallId}`,
        file,
        caption: args.caption ?? '',
      });
      if (queued) return `Queued ${name} (${mime}, ${sizeText(bytes.length)}) for delivery to this chat.`;
      // A scheduled run has no chat: the file goes out with the run's report.
      if (await attachRunFile(context.db, context.turnId, file)) return `Attached ${name} (${mime}, ${sizeText(bytes.length)}) to this run's report.`;
      return `This conversation is not in a chat, so nothing was sent; ${args.path} stays in the workspace.`;
    },
  });
}
