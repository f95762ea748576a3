import { z } from 'zod';
import { integer, oneOf, optionalText, url } from './fields.ts';
import { endpointFor, modelName } from './model.ts';
import type { ModelEndpoint } from './model.ts';
import { parseBlobUrl } from './blob-url.ts';
import type { S3BlobLocation } from './blob-url.ts';

/** Files people send and the agent sends back (docs/attachments.md). */
export interface AttachmentsConfig {
  /** Largest file taken in or sent out, in bytes (HERALD_MAX_ATTACHMENT_MB), enforced while reading. */
  maxBytes: number;
  /** The OpenAI-compatible /v1/audio/transcriptions endpoint for voice notes; null: not transcribed. */
  transcribe: ModelEndpoint | null;
  /** Whether the model is given images: 'auto' looks the model up in the table of known vision models. */
  vision: 'auto' | 'on' | 'off';
  /** The bucket blob bytes go to (HERALD_BLOB_URL); null: the blobs table in Postgres. */
  blobStorage: S3BlobLocation | null;
}

/** HERALD_BLOB_URL, checked at start so a wrong one stops the process rather than the first upload. */
export const blobUrl = optionalText.superRefine((text, context) => {
  const location = text === undefined ? undefined : parseBlobUrl(text);
  if (typeof location === 'string') context.addIssue({ code: 'custom', message: location });
});

export const attachmentsSection = z
  .object({
    HERALD_MAX_ATTACHMENT_MB: integer(1, 2000).default(20),
    HERALD_TRANSCRIBE_MODEL: modelName,
    HERALD_MODEL_VISION: oneOf(['auto', 'on', 'off'] as const).default('auto'),
    HERALD_BLOB_URL: blobUrl,
    OPENAI_API_KEY: optionalText,
    OPENAI_BASE_URL: optionalText.pipe(url(/^https?:$/, 'http://127.0.0.1:11434/v1').optional()),
  })
  .superRefine((e, context) => {
    const endpoint = endpointFor(e.HERALD_TRANSCRIBE_MODEL, e);
    if (endpoint === undefined || endpoint.provider === 'openai') return;
    context.addIssue({ code: 'custom', path: ['HERALD_TRANSCRIBE_MODEL'], message: 'expected openai/<model> (any OpenAI-compatible server through OPENAI_BASE_URL)' });
  })
  .transform((e): AttachmentsConfig => ({
    maxBytes: e.HERALD_MAX_ATTACHMENT_MB * 1024 * 1024,
    transcribe: endpointFor(e.HERALD_TRANSCRIBE_MODEL, e) ?? null,
    vision: e.HERALD_MODEL_VISION,
    blobStorage: blobLocation(e.HERALD_BLOB_URL),
  }));

/** The settings with nothing set, for an edge built without a config (tests, tools). */
export const DEFAULT_ATTACHMENTS: AttachmentsConfig = attachmentsSection.parse({});

/** The parsed HERALD_BLOB_URL (already checked by `blobUrl`), or null when unset. */
export function blobLocation(text: string | undefined): S3BlobLocation | null {
  const location = text === undefined ? undefined : parseBlobUrl(text);
  return location === undefined || typeof location === 'string' ? null : location;
}
