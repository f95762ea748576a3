import { z } from 'zod';
import { attachmentInput } from './api-attachments.ts';

/** Files one API message may carry. */
export const MAX_API_ATTACHMENTS = 10;

const id = z.union([z.string().trim().min(1).max(256), z.number().int().transform(String)]);

export const messageBody = z
  .object({
    chat_id: id,
    user_id: id,
    // May be empty only when files come with it.
    text: z.string(),
    attachments: z.array(attachmentInput).max(MAX_API_ATTACHMENTS).optional(),
    user_name: z.string().max(256).optional(),
    thread_id: id.optional(),
    idempotency_key: z.string().min(1).max(256).optional(),
    // The profile that answers (GET /v1/profiles); `main` when not given.
    profile: z.string().min(1).max(64).optional(),
  })
  .refine((body) => body.text.trim().length > 0 || (body.attachments?.length ?? 0) > 0, { error: 'must not be empty', path: ['text'] });

export type MessageBody = z.infer<typeof messageBody>;

export const waitQuery = z.object({
  wait: z.coerce.number({ error: 'expected a number of seconds' }).min(0).max(600).optional(),
});

/** The first problem of a zod error as `{field, message}` for a 400 that names the field. */
export function firstIssue(error: z.ZodError): { field: string; message: string } {
  const issue = error.issues[0];
  const field = issue && issue.path.length > 0 ? issue.path.join('.') : 'body';
  const message = issue?.code === 'invalid_type' && issue.input === undefined ? 'is required' : (issue?.message ?? 'is invalid');
  return { field, message: `${field}: ${message}` };
}
