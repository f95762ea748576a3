import { z } from 'zod';

const part = z.looseObject({ type: z.string(), text: z.string().optional() });

/** One message of a chat-completions request; content as text, as parts, or empty (a tool-calling turn). */
const chatMessage = z.looseObject({
  role: z.string(),
  content: z.union([z.string(), z.array(part), z.null()]).optional(),
});

/**
 * The chat-completions request as front ends send it. Fields Herald has no use for (temperature,
 * tools, max_tokens...) are accepted and ignored: the profile's own settings and tools apply.
 */
export const chatCompletionBody = z.looseObject({
  model: z.string().trim().min(1).max(64),
  messages: z.array(chatMessage).min(1),
  stream: z.boolean().optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
  user: z.string().trim().min(1).max(256).optional(),
});

export type ChatCompletionBody = z.infer<typeof chatCompletionBody>;

/** The text of a message's content: the string, or its text parts joined by blank lines. */
function textOf(content: ChatCompletionBody['messages'][number]['content']): string {
  if (typeof content === 'string') return content;
  return (content ?? []).flatMap((item) => (item.type === 'text' && typeof item.text === 'string' ? [item.text] : [])).join('\n\n');
}

/**
 * The one new input of a request: its newest user message. Front ends resend the whole
 * conversation each time; what came before is already Herald's history, so it is not taken again.
 */
export function newestUserText(body: ChatCompletionBody): string | undefined {
  for (let i = body.messages.length - 1; i >= 0; i--) {
    const message = body.messages[i]!;
    if (message.role === 'user') return textOf(message.content);
  }
  return undefined;
}
