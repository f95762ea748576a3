/** One part of a multipart/form-data body. */
export interface FormPart {
  name: string;
  filename?: string;
  bytes: Buffer;
}

/**
 * A small multipart/form-data reader for the fakes: grammy writes headers without the space after
 * the colon, which undici's FormData parser refuses, while Telegram takes them.
 */
export function parseMultipart(body: Buffer, contentType: string): FormPart[] {
  const boundary = /boundary=("?)([^";]+)\1/.exec(contentType)?.[2];
  if (boundary === undefined) return [];
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: FormPart[] = [];
  let start = body.indexOf(delimiter);
  while (start >= 0) {
    const from = start + delimiter.length;
    const next = body.indexOf(delimiter, from);
    if (next < 0) break;
    const chunk = body.subarray(from, next);
    const headerEnd = chunk.indexOf('\r\n\r\n');
    if (headerEnd >= 0) {
      const headers = chunk.subarray(0, headerEnd).toString('utf8');
      // Quoted or not: grammy writes filename=x.csv bare.
      const name = /;\s*name="?([^";\r\n]*)"?/i.exec(headers)?.[1];
      const filename = /;\s*filename="?([^";\r\n]*)"?/i.exec(headers)?.[1];
      // The part's bytes end before the CRLF that precedes the next delimiter.
      const bytes = chunk.subarray(headerEnd + 4, chunk.length - 2);
      if (name !== undefined) parts.push({ name, ...(filename === undefined ? {} : { filename }), bytes: Buffer.from(bytes) });
    }
    start = next;
  }
  return parts;
}
