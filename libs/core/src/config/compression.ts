import { z } from 'zod';
import { integer, oneOf, optionalText } from './fields.ts';
import { endpointFor, modelName } from './model.ts';
import type { ModelEndpoint } from './model.ts';

/** When and how a long session is compacted into a child session (docs/long-chats.md). */
export interface CompressionConfig {
  /** The model's context window in tokens; undefined: the table of well-known models, else 128,000. */
  contextTokens: number | undefined;
  /** Share of the window past which a session is compressed (raised to 0.75 for windows under 512K). */
  threshold: number;
  /** provider/model of the summariser; undefined: the main model. */
  summaryModel: ModelEndpoint | undefined;
  /** What a summariser failure other than auth or network does: a mechanical digest, or nothing. */
  onFailure: 'fallback' | 'abort';
  /** Messages in one session past which it is compressed whatever its token count (Hermes' hygiene limit). */
  messageLimit: number;
}

const compressionEnv = z.object({
  HERALD_CONTEXT_TOKENS: integer(1000, 100_000_000).optional(),
  HERALD_COMPRESSION_THRESHOLD: z.coerce.number({ error: 'expected a number' }).gt(0, { error: 'expected a share above 0' }).max(0.95, { error: 'expected at most 0.95' }).default(0.5),
  HERALD_SUMMARY_MODEL: modelName,
  HERALD_COMPRESSION_ON_FAILURE: oneOf(['fallback', 'abort']).default('fallback'),
  HERALD_COMPRESSION_MESSAGE_LIMIT: integer(10, 1_000_000).default(5000),
  // The summariser reaches its provider with the model section's key and base URL.
  OPENAI_API_KEY: optionalText,
  OPENAI_BASE_URL: optionalText,
  ANTHROPIC_API_KEY: optionalText,
  ANTHROPIC_BASE_URL: optionalText,
});

export const compressionSection = compressionEnv.transform((e): CompressionConfig => ({
  contextTokens: e.HERALD_CONTEXT_TOKENS,
  threshold: e.HERALD_COMPRESSION_THRESHOLD,
  summaryModel: endpointFor(e.HERALD_SUMMARY_MODEL, e),
  onFailure: e.HERALD_COMPRESSION_ON_FAILURE,
  messageLimit: e.HERALD_COMPRESSION_MESSAGE_LIMIT,
}));
