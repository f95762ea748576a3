import { extname } from 'node:path';
import type { AttachmentsConfig } from '@herald/core';
import type { Db } from '@herald/db';
import { putBlob } from './blob-store.ts';
import { describeAttachment, safeFileName, workspacePathOf } from './attachment.ts';
import type { Attachment } from './attachment.ts';
import { readCapped } from './capped-read.ts';
import { sniffType } from './file-types.ts';
import { transcribe } from './transcription.ts';
import { AttachmentRefusedError } from './attachment-errors.ts';

/** A file on its way in, before a byte of it is read: every platform and the API hand these over. */
export interface IncomingFile {
  /** The sender's name for it; a Telegram photo or voice note has none, so the platform names it. */
  name: string;
  /** The size the platform or the caller states, when it does: over the cap, refused before downloading. */
  declaredBytes?: number | undefined;
  /** Reads it whole, never past maxBytes (readCapped); called at most once. */
  read(maxBytes: number): Promise<Buffer>;
}

/** Bytes already in hand (the API's base64) as an incoming file. */
export function bufferedFile(name: string, bytes: Buffer): IncomingFile {
  return {
    name,
    declaredBytes: bytes.length,
    read: (maxBytes) => readCapped([bytes], { name, maxBytes, declaredBytes: bytes.length }),
  };
}

/** A file read and typed, not stored yet. */
interface CheckedFile {
  name: string;
  mime: string;
  kind: Attachment['kind'];
  bytes: Buffer;
}

/** Downloads (never past the cap) and types one file from its bytes; refuses with AttachmentRefusedError. */
async function checkFile(file: IncomingFile, maxBytes: number): Promise<CheckedFile> {
  let name = safeFileName(file.name, 'file');
  if (file.declaredBytes !== undefined && file.declaredBytes > maxBytes) {
    await readCapped([], { name, maxBytes, declaredBytes: file.declaredBytes });
  }
  const bytes = await file.read(maxBytes);
  if (bytes.length === 0) throw new AttachmentRefusedError(`${name} is empty`);
  const { mime, kind, ext } = await sniffType(bytes, name);
  // A photo or voice note has no name of its own: it gets its format's extension, so tools know it.
  if (extname(name) === '') name = `${name}.${ext}`;
  return { name, mime, kind, bytes };
}

/** Stores a checked file; the same bytes are stored once, whoever sends them how often. */
async function storeFile(db: Db, file: CheckedFile): Promise<Attachment> {
  const sha256 = await putBlob(db, file.bytes, file.mime);
  return { sha256, name: file.name, mime: file.mime, kind: file.kind, size: file.bytes.length, path: workspacePathOf(sha256, file.name) };
}

/** Downloads, checks and stores one file (send_file's way in; a message's files go through takeMessageFiles). */
export async function takeFile(db: Db, file: IncomingFile, maxBytes: number): Promise<Attachment> {
  return storeFile(db, await checkFile(file, maxBytes));
}

/** What a message becomes once its files are taken in: its text for the model, the files, and lines for the person. */
export interface TakenMessage {
  text: string;
  attachments: Attachment[];
  /** Said to the person at once (a transcript, a file refused, no transcription model). */
  notices: string[];
}

export const NO_TRANSCRIPTION_NOTICE = 'I got your voice note but cannot listen to it: no transcription model is set up (HERALD_TRANSCRIBE_MODEL). Please type your message.';

export interface TakeOptions {
  /** Throw a refused file (AttachmentRefusedError naming `attachments.<n>`) instead of a notice: the API. */
  strict?: boolean;
  /**
   * Given the checked files' total size before any is stored; what it throws (the person's daily
   * allowance spent: @herald/session filesAdmission) refuses the whole message, nothing stored.
   */
  admit?: (bytes: number) => Promise<void>;
}

/**
 * Takes a message's files in: each checked first, then admitted (`admit`), then stored and
 * described in the text (so the model and history search see its name); a voice note or audio
 * file is transcribed into the text, with the person told so. A refused file is named in a notice
 * and the rest of the message goes through; with `strict` (the API) it is thrown instead, before
 * anything is stored, its field named.
 */
export async function takeMessageFiles(db: Db, config: AttachmentsConfig, text: string, files: readonly IncomingFile[], options: TakeOptions = {}): Promise<TakenMessage> {
  const lines = text.trim() === '' ? [] : [text];
  const notices: string[] = [];
  const checked: CheckedFile[] = [];
  for (const [index, file] of files.entries()) {
    try {
      checked.push(await checkFile(file, config.maxBytes));
    } catch (error) {
      if (!(error instanceof AttachmentRefusedError)) throw error;
      if (options.strict === true) throw new AttachmentRefusedError(`attachments.${index}: ${error.message}`, `attachments.${index}`);
      notices.push(`I could not take ${safeFileName(file.name, 'your file')}: ${error.message}.`);
    }
  }
  if (checked.length > 0) await options.admit?.(checked.reduce((sum, file) => sum + file.bytes.length, 0));
  const attachments: Attachment[] = [];
  for (const file of checked) {
    const attachment = await storeFile(db, file);
    attachments.push(attachment);
    lines.push(describeAttachment(attachment));
    if (attachment.kind === 'audio') lines.push(...(await transcribed(db, config, attachment, file.bytes, notices)));
  }
  return { text: lines.join('\n'), attachments, notices };
}

async function transcribed(db: Db, config: AttachmentsConfig, audio: Attachment, bytes: Buffer, notices: string[]): Promise<string[]> {
  if (config.transcribe === null) {
    notices.push(NO_TRANSCRIPTION_NOTICE);
    return ['(not transcribed: no transcription model is configured)'];
  }
  try {
    const transcript = await transcribe(db, config.transcribe, audio, bytes);
    notices.push(`Transcribed your voice note: "${transcript}"`);
    return [`Transcript of ${audio.name}:`, transcript];
  } catch (error) {
    notices.push(`I could not transcribe your voice note: ${(error as Error).message}. Please type your message.`);
    return ['(transcription failed)'];
  }
}
