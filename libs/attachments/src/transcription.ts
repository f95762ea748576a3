import type { ModelEndpoint } from '@herald/core';
import type { Db } from '@herald/db';
import { readTranscript, saveTranscript } from './blob-store.ts';
import type { Attachment } from './attachment.ts';

const OPENAI_API = 'https://api.openai.com/v1';
const TRANSCRIBE_TIMEOUT_MS = 120_000;

/** The transcription endpoint failed; the person is told, the file is still attached. */
export class TranscriptionError extends Error {
  override readonly name = 'TranscriptionError';
}

/**
 * A voice note's or audio file's text, through an OpenAI-compatible /v1/audio/transcriptions
 * (HERALD_TRANSCRIBE_MODEL). Kept on the blob: the same bytes are transcribed once, however often
 * the update is redelivered.
 */
export async function transcribe(db: Db, endpoint: ModelEndpoint, audio: Attachment, bytes: Buffer): Promise<string> {
  const cached = await readTranscript(db, audio.sha256);
  if (cached !== null) return cached;
  const form = new FormData();
  form.append('model', endpoint.model);
  form.append('file', new Blob([new Uint8Array(bytes)], { type: audio.mime }), audio.name);
  const base = (endpoint.baseURL ?? OPENAI_API).replace(/\/+$/, '');
  const response = await fetch(`${base}/audio/transcriptions`, {
    method: 'POST',
    body: form,
    headers: endpoint.apiKey === undefined ? {} : { authorization: `Bearer ${endpoint.apiKey}` },
    signal: AbortSignal.timeout(TRANSCRIBE_TIMEOUT_MS),
  }).catch((error: unknown) => {
    throw new TranscriptionError(`the transcription service could not be reached (${(error as Error).message})`);
  });
  if (!response.ok) throw new TranscriptionError(`the transcription service answered HTTP ${response.status}`);
  const body = (await response.json().catch(() => ({}))) as { text?: unknown };
  if (typeof body.text !== 'string') throw new TranscriptionError('the transcription service answered without text');
  const text = body.text.trim();
  await saveTranscript(db, audio.sha256, text);
  return text;
}
