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

/** Downloads, checks (size, type from the bytes) and stores one file; the same bytes are stored once. */
export async function takeFile(db: Db, file: IncomingFile, maxBytes: number): Promise<{ attachment: Attachment; bytes: Buffer }> {
  let shownName = safeFileName(file.name, 'file');
  if (file.declaredBytes !== undefined && file.declaredBytes > maxBytes) {
    await readCapped([], { name: shownName, maxBytes, declaredBytes: file.declaredBytes });
  }
  const bytes = await file.read(maxBytes);
  if (bytes.length === 0) throw new AttachmentRefusedError(`${shownName} is empty`);
  const { mime, kind, ext } = await sniffType(bytes, shownName);
  // A photo or voice note has no name of its own: it gets its format's extension, so tools know it.
  if (extname(shownName) === '') shownName = `${shownName}.${ext}`;
  const sha256 = await putBlob(db, bytes, mime);
  return { attachment: { sha256, name: shownName, mime, kind, size: bytes.length, path: workspacePathOf(sha256, shownName) }, bytes };
}

/** What a message becomes once its files are taken in: its text for the model, the files, and lines for the person. */
export interface TakenMessage {
  text: string;
  attachments: Attachment[];
  /** Said to the person at once (a transcript, a file refused, no transcription model). */
  notices: string[];
}

export const NO_TRANSCRIPTION_NOTICE =
  'I got your voice note but cannot listen to it: no transcription model is set up (HERALD_TRANSCRIBE_MODEL). Please type your message.';

/**
 * Takes a message's files in: each stored, described in the text (so the model and history search
 * see its name), a voice note or audio file transcribed into the text with the person told so.
 * A refused file is named in a notice; the rest of the message still goes through.
 */
export async function takeMessageFiles(db: Db, config: AttachmentsConfig, text: string, files: readonly IncomingFile[]): Promise<TakenMessage> {
  const lines = text.trim() === '' ? [] : [text];
  const attachments: Attachment[] = [];
  const notices: string[] = [];
  for (const file of files) {
    let taken;
    try {
      taken = await takeFile(db, file, config.maxBytes);
    } catch (error) {
      if (!(error instanceof AttachmentRefusedError)) throw error;
      notices.push(`I could not take ${safeFileName(file.name, 'your file')}: ${error.message}.`);
      continue;
    }
    attachments.push(taken.attachment);
    lines.push(describeAttachment(taken.attachment));
    if (taken.attachment.kind === 'audio') lines.push(...(await transcribed(db, config, taken.attachment, taken.bytes, notices)));
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
