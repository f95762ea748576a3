/**
 * A file Herald will not take or send: too large, its name lying about its bytes, a URL it may not
 * fetch. The message is for the person (or the API caller) as it is: it names the file and why.
 */
export class AttachmentRefusedError extends Error {
  override readonly name = 'AttachmentRefusedError';
  /** The field the caller gave, for a 400 that names it. */
  readonly field: string | undefined;
  constructor(message: string, field?: string) {
    super(message);
    this.field = field;
  }
}

/** Megabytes, for messages: 20 MB, 0.4 MB. */
export function megabytes(bytes: number): string {
  const mb = bytes / (1024 * 1024);
  return `${mb >= 10 ? Math.round(mb) : Math.round(mb * 10) / 10} MB`;
}
