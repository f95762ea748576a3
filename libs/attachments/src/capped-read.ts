import { AttachmentRefusedError, megabytes } from './attachment-errors.ts';

/**
 * Reads a body up to `maxBytes`, refusing as soon as it passes the cap: a declared length over it is
 * refused before a byte is read, and a body that lies about its length (or has none) is cut off the
 * moment the running count passes the cap, never read whole first.
 */
export async function readCapped(
  body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  options: { name: string; maxBytes: number; declaredBytes?: number | undefined; cancel?: () => void },
): Promise<Buffer> {
  const { name, maxBytes } = options;
  const tooLarge = () => new AttachmentRefusedError(`${name} is larger than the ${megabytes(maxBytes)} attachments may be (HERALD_MAX_ATTACHMENT_MB)`);
  if (options.declaredBytes !== undefined && options.declaredBytes > maxBytes) {
    options.cancel?.();
    throw tooLarge();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > maxBytes) {
      options.cancel?.();
      throw tooLarge();
    }
    chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
  }
  return Buffer.concat(chunks, size);
}

/** A fetch Response's body, read under the cap (its Content-Length checked first). */
export async function readResponseCapped(response: Response, name: string, maxBytes: number): Promise<Buffer> {
  const length = Number(response.headers.get('content-length') ?? Number.NaN);
  const body = response.body;
  if (body === null) return Buffer.alloc(0);
  return readCapped(body as unknown as AsyncIterable<Uint8Array>, {
    name,
    maxBytes,
    declaredBytes: Number.isFinite(length) ? length : undefined,
    cancel: () => void body.cancel().catch(() => undefined),
  });
}
