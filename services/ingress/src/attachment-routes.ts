import { z } from 'zod';
import type { FastifyInstance } from 'fastify';
import type { Db } from '@herald/db';
import { readBlob, sessionFile } from '@herald/attachments';
import { sendError } from './api-errors.ts';
import { withContract } from './contracts/route-contract.ts';

const attachmentParams = z.object({ id: z.string(), sha256: z.string().regex(/^[0-9a-f]{64}$/, { error: 'expected a lower-case SHA-256' }) });

/** Types a browser may show inline (the console draws them as blob: images); everything else downloads. */
const INLINE_IMAGES: ReadonlySet<string> = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/**
 * GET /v1/sessions/:id/attachments/:sha256: a file of the session (one a message brought or
 * send_file sent), for the console's transcript. The session guard decides who may read it; bytes
 * of another session are a 404 here even when stored. Never rendered as a page: nosniff, a
 * sandboxing CSP, images typed as themselves for blob: display, everything else (SVG and HTML
 * included) as application/octet-stream with Content-Disposition: attachment.
 */
export function registerAttachmentRoutes(app: FastifyInstance, db: Db): void {
  const contract = withContract({
    summary: "A file of the session's messages, as bytes",
    tags: ['sessions'],
    params: attachmentParams,
    produces: 'application/octet-stream',
    response: { 200: z.string().meta({ description: 'the file bytes' }) },
  });
  app.get<{ Params: { id: string; sha256: string } }>('/v1/sessions/:id/attachments/:sha256', contract, async (request, reply) => {
    const file = await sessionFile(db, request.params.id, request.params.sha256);
    const bytes = file === undefined ? undefined : await readBlob(db, request.params.sha256);
    if (file === undefined || bytes === undefined) return sendError(reply, 404, 'not_found', 'no such file in this session');
    const inline = INLINE_IMAGES.has(file.mime);
    const name = encodeURIComponent(file.name);
    return reply
      .header('content-type', inline ? file.mime : 'application/octet-stream')
      .header('content-disposition', `${inline ? 'inline' : 'attachment'}; filename*=UTF-8''${name}`)
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', "default-src 'none'; sandbox")
      .header('cache-control', 'private, no-store')
      .send(bytes);
  });
}
