import { z } from 'zod';
import type { HookEvent } from './hook-spec.ts';

/** What a hook may answer, per event. Anything else a hook returns is ignored (and logged). */
export type Directive =
  | { action: 'skip'; reason?: string | undefined }
  | { action: 'rewrite'; text: string }
  | { action: 'block'; message: string }
  | { action: 'approve'; message: string; rule_key?: string | undefined }
  | { action: 'context'; context: string }
  | { action: 'replace'; text: string };

const gateway = z.union([z.object({ action: z.literal('skip'), reason: z.string().optional() }), z.object({ action: z.literal('rewrite'), text: z.string().min(1) })]);
const toolCall = z.union([
  z.object({ action: z.literal('block'), message: z.string().min(1) }),
  // Claude-style shell hook output, as Hermes accepts it.
  z.object({ decision: z.literal('block'), reason: z.string().min(1) }).transform((value) => ({ action: 'block' as const, message: value.reason })),
  z.object({
    action: z.literal('approve'),
    message: z.string().min(1),
    rule_key: z
      .string()
      .regex(/^[\w.:-]{1,64}$/)
      .optional(),
  }),
]);
const llmContext = z.union([
  z
    .string()
    .min(1)
    .transform((context) => ({ action: 'context' as const, context })),
  z.object({ context: z.string().min(1) }).transform((value) => ({ action: 'context' as const, context: value.context })),
]);
const replacement = z.union([
  z.string().transform((text) => ({ action: 'replace' as const, text })),
  z.object({ text: z.string() }).transform((value) => ({ action: 'replace' as const, text: value.text })),
]);

const schemas: Partial<Record<HookEvent, z.ZodType<Directive>>> = {
  pre_gateway_dispatch: gateway,
  pre_tool_call: toolCall,
  pre_llm_call: llmContext,
  transform_tool_result: replacement,
};

/**
 * The directive a hook's answer carries for `event`, or null: undefined, null, `{}` and
 * `{"action":"allow"}` say "go on"; an answer that is not a directive of this event is ignored.
 */
export function parseDirective(event: HookEvent, answer: unknown): { directive: Directive | null; ignored: boolean } {
  if (answer === undefined || answer === null) return { directive: null, ignored: false };
  if (typeof answer === 'object' && !Array.isArray(answer)) {
    const action = (answer as { action?: unknown }).action;
    if (Object.keys(answer).length === 0 || action === 'allow' || action === 'continue') return { directive: null, ignored: false };
  }
  const schema = schemas[event];
  if (!schema) return { directive: null, ignored: true };
  const parsed = schema.safeParse(answer);
  return parsed.success ? { directive: parsed.data, ignored: false } : { directive: null, ignored: true };
}

/** What `on_error: closed` means for an event that takes directives: the safe side of each. */
export function closedDirective(event: HookEvent, hook: string, why: string): Directive | null {
  switch (event) {
    case 'pre_tool_call':
      return { action: 'block', message: `BLOCKED by the policy hook '${hook}', which could not decide (${why}). Do not retry this call; tell the person it was blocked.` };
    case 'pre_gateway_dispatch':
      return { action: 'skip', reason: `hook '${hook}' failed closed (${why})` };
    case 'transform_tool_result':
      return { action: 'replace', text: `[withheld: the result filter '${hook}' failed (${why}), so the result is not shown]` };
    default:
      return null;
  }
}
