import type { IncomingMessage } from 'node:http';
import { AttachmentRefusedError, bufferedFile, readCapped } from '@herald/attachments';
import type { IncomingFile } from '@herald/attachments';
import { Allowlist, BlockedAddressError, pinnedRequest } from '@herald/tools';
import { z } from 'zod';

const MAX_REDIRECTS = 5;
const FETCH_TIMEOUT_MS = 60_000;

/** One file of `POST /v1/messages`: its bytes in base64 `data`, or a `url` Herald fetches under the SSRF rules. */
export const attachmentInput = z
  .object({
    name: z.string().trim().min(1).max(255),
    /** Informative only: the type is sniffed from the bytes. */
    mime: z.string().trim().min(1).max(255).optional(),
    data: z
      .string()
      .regex(/^[A-Za-z0-9+/]*={0,2}$/, { error: 'expected base64' })
      .optional(),
    url: z.url({ protocol: /^https?$/, error: 'expected an http or https URL' }).optional(),
  })
  .refine((file) => (file.data === undefined) !== (file.url === undefined), { error: 'give exactly one of data (base64) and url' });

export type AttachmentInput = z.infer<typeof attachmentInput>;

/** The API's files as incoming files: base64 decoded, a URL fetched only when read. */
export function apiFiles(attachments: readonly AttachmentInput[], webAllowlist: readonly string[]): IncomingFile[] {
  const allowlist = new Allowlist(webAllowlist);
  return attachments.map((file) =>
    file.data !== undefined ? bufferedFile(file.name, Buffer.from(file.data, 'base64')) : { name: file.name, read: (maxBytes) => fetchUrl(new URL(file.url ?? ''), file.name, allowlist, maxBytes) },
  );
}

/**
 * Fetches a caller's URL as web_extract does: no loopback, private or link-local address (names
 * resolved once and pinned), each redirect checked again, the body read under the cap.
 */
async function fetchUrl(start: URL, name: string, allowlist: Allowlist, maxBytes: number): Promise<Buffer> {
  const signal = AbortSignal.timeout(FETCH_TIMEOUT_MS);
  let url = start;
  for (let redirects = 0; ; redirects++) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new AttachmentRefusedError(`${url.protocol} URLs are not fetched`);
    let response: IncomingMessage;
    try {
      response = await pinnedRequest(url, { method: 'GET', headers: { 'user-agent': 'Herald/0.1 (attachments)' }, allowlist, signal });
    } catch (error) {
      if (error instanceof BlockedAddressError) throw new AttachmentRefusedError(error.message);
      throw new AttachmentRefusedError(`${url.host} could not be fetched (${(error as Error).message})`);
    }
    const status = response.statusCode ?? 0;
    const location = response.headers.location;
    if ([301, 302, 303, 307, 308].includes(status) && location !== undefined) {
      response.destroy();
      if (redirects >= MAX_REDIRECTS) throw new AttachmentRefusedError(`more than ${MAX_REDIRECTS} redirects`);
      url = new URL(location, url);
      continue;
    }
    if (status >= 400) {
      response.destroy();
      throw new AttachmentRefusedError(`${url.host} answered HTTP ${status}`);
    }
    const length = Number(response.headers['content-length'] ?? Number.NaN);
    return readCapped(response, { name, maxBytes, declaredBytes: Number.isFinite(length) ? length : undefined, cancel: () => response.destroy() });
  }
}
