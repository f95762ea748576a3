import { z } from 'zod';

/** GET /v1/models: the profiles, as OpenAI lists models. */
export const modelList = z.object({
  object: z.literal('list'),
  data: z.array(z.object({ id: z.string(), object: z.literal('model'), created: z.number(), owned_by: z.string() })),
});

const usage = z.object({ prompt_tokens: z.number(), completion_tokens: z.number(), total_tokens: z.number() });

/** POST /v1/chat/completions without `stream`: one assistant message with usage. */
export const chatCompletion = z.object({
  id: z.string(),
  object: z.literal('chat.completion'),
  created: z.number(),
  model: z.string(),
  system_fingerprint: z.null(),
  choices: z.array(
    z.object({
      index: z.number(),
      message: z.object({ role: z.literal('assistant'), content: z.string(), refusal: z.null() }),
      logprobs: z.null(),
      finish_reason: z.string(),
    }),
  ),
  usage,
});

/** With `stream: true`: chat.completion.chunk events ending in `data: [DONE]`. */
export const chatCompletionStream = z.string().describe('text/event-stream of chat.completion.chunk objects, then [DONE]');
