import type { AttachmentKind, StoredFile } from '@herald/db';

/** A file a message carried: its blob, safe name, sniffed type, and where the session's workspace has it. */
export interface Attachment extends StoredFile {
  kind: AttachmentKind;
  /** Relative to the session's workspace: attachments/<first 8 of the hash>-<name>. */
  path: string;
}

/** The folder of a session's workspace where the files people send are written. */
export const ATTACHMENTS_DIR = 'attachments';

/**
 * A sender's file name made safe to show and to write: no folders, no control characters, no
 * leading dots, at most 100 characters (the extension kept).
 */
export function safeFileName(raw: string, fallback: string): string {
  const base = raw.split(/[\\/]/).pop() ?? '';
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is removed
  const printable = base.replace(/[\u0000-\u001f\u007f]/g, '');
  const cleaned = printable
    .replace(/[^\p{L}\p{N}._ -]/gu, '_')
    .replace(/^[.\s]+/, '')
    .trim();
  if (cleaned === '') return fallback;
  if (cleaned.length <= 100) return cleaned;
  const dot = cleaned.lastIndexOf('.');
  const ext = dot > 0 && cleaned.length - dot <= 10 ? cleaned.slice(dot) : '';
  return cleaned.slice(0, 100 - ext.length) + ext;
}

export function workspacePathOf(sha256: string, name: string): string {
  return `${ATTACHMENTS_DIR}/${sha256.slice(0, 8)}-${name}`;
}

/**
 * Whether a message's text may come with files: every file taken in adds its describeAttachment line,
 * which names its workspace path. A text without one has no files, so a turn need not look them up
 * (one round trip per turn); a text that only looks like one costs that lookup, which finds none.
 */
export function mayCarryFiles(text: string): boolean {
  return text.includes(`${ATTACHMENTS_DIR}/`);
}

/** A size for people: 512 B, 1.2 KB, 3.4 MB. */
export function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 102.4) / 10} KB`;
  return `${Math.round(bytes / (1024 * 104.8576)) / 10} MB`;
}

/**
 * The line a message carries for each attachment, so the model (and history search) knows what
 * came and where the file tools and the terminal find it.
 */
export function describeAttachment(attachment: Attachment): string {
  const where = `${attachment.path}, ${attachment.mime}, ${sizeText(attachment.size)}`;
  if (attachment.kind === 'image') return `[image attached: ${where}]`;
  if (attachment.kind === 'audio') return `[audio attached: ${where}]`;
  return `[file attached: ${where}]`;
}
