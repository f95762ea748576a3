import { z } from 'zod';

/** The events hooks can take, with Hermes' names (../shared/reference/hermes.md §12). */
export const HOOK_EVENTS = [
  'pre_gateway_dispatch',
  'on_session_start',
  'on_session_end',
  'pre_llm_call',
  'post_llm_call',
  'pre_tool_call',
  'transform_tool_result',
  'post_tool_call',
  'pre_approval_request',
  'post_approval_response',
  'subagent_start',
  'subagent_stop',
  'cron_fire',
  'delivery_failed',
] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

/** The events whose hooks may return a directive; every other event only informs. */
export const DIRECTIVE_EVENTS: ReadonlySet<HookEvent> = new Set(['pre_gateway_dispatch', 'pre_llm_call', 'pre_tool_call', 'transform_tool_result']);

export const DEFAULT_HOOK_TIMEOUT_MS = 2000;

const name = z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/, { error: 'expected 1-64 of a-z 0-9 _ . - (starting with a letter or digit)' });

/** An https URL, or http to a loopback host (a receiver on the same machine, allowlisted to be reached). */
const hookUrl = z.string().refine(
  (value) => {
    try {
      const url = new URL(value);
      if (url.username !== '' || url.password !== '') return false;
      if (url.protocol === 'https:') return true;
      return url.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
    } catch {
      return false;
    }
  },
  { error: 'expected an https:// URL (http:// only to 127.0.0.1, localhost or [::1]), without credentials' },
);

const common = {
  name,
  event: z.enum(HOOK_EVENTS, { error: `expected one of ${HOOK_EVENTS.join(', ')}` }),
  timeout_ms: z.number().int().min(1).max(60_000).default(DEFAULT_HOOK_TIMEOUT_MS),
  on_error: z.enum(['open', 'closed'], { error: 'expected open or closed' }).default('open'),
  /** Profiles this hook applies to; every profile when absent. */
  profiles: z.array(z.string().min(1)).min(1).optional(),
};

const argv = z
  .array(
    z
      .string()
      .min(1)
      .refine((arg) => !arg.includes('\0'), { error: 'NUL byte in an argument' }),
  )
  .min(1);

export const moduleHookSchema = z.strictObject({ ...common, module: z.string().min(1) });
export const commandHookSchema = z.strictObject({ ...common, command: argv });
export const urlHookSchema = z.strictObject({ ...common, url: hookUrl });

const KINDS = { module: moduleHookSchema, command: commandHookSchema, url: urlHookSchema } as const;

/**
 * One hook: the kind is picked by its key first, so a bad field is reported as itself (a union
 * would only say that no kind matched).
 */
function kindSchema<T extends Partial<Record<keyof typeof KINDS, z.ZodType>>>(kinds: T, refusal: string) {
  return z.unknown().transform((value, context) => {
    const present = value !== null && typeof value === 'object' ? (Object.keys(KINDS) as (keyof typeof KINDS)[]).filter((kind) => kind in value) : [];
    const schema = present.length === 1 ? kinds[present[0] as keyof T] : undefined;
    if (schema === undefined) {
      context.addIssue({ code: 'custom', message: present.length === 1 ? refusal : 'expected exactly one of module, command or url' });
      return z.NEVER;
    }
    const parsed = (schema as z.ZodType).safeParse(value);
    if (parsed.success) return parsed.data as z.infer<NonNullable<T[keyof T]>>;
    for (const issue of parsed.error.issues) context.addIssue({ ...issue, code: 'custom', message: issue.message, path: issue.path } as never);
    return z.NEVER;
  });
}

export const hookSpecSchema = kindSchema(KINDS, 'expected exactly one of module, command or url');
export type HookSpec = z.infer<typeof hookSpecSchema>;

/**
 * Hooks set per profile through the API: commands (run in the tool sandbox) and url observers.
 * A module runs inside the worker with all of its authority, so only the operator's file may name one.
 */
export const profileHookSchema = kindSchema(
  { command: commandHookSchema.omit({ profiles: true }), url: urlHookSchema.omit({ profiles: true }) },
  'module hooks are set in HERALD_HOOKS_FILE only (they run inside the worker); use command or url',
);
export const profileHooksSchema = z.array(profileHookSchema).max(32);

export const hooksFileSchema = z.strictObject({ hooks: z.array(hookSpecSchema) }).superRefine((file, context) => {
  const seen = new Set<string>();
  for (const [index, hook] of file.hooks.entries()) {
    if (seen.has(hook.name)) context.addIssue({ code: 'custom', path: ['hooks', index, 'name'], message: `duplicate hook name '${hook.name}'` });
    seen.add(hook.name);
  }
});

export function hookKind(spec: HookSpec): 'module' | 'command' | 'url' {
  if ('module' in spec) return 'module';
  if ('command' in spec) return 'command';
  return 'url';
}

/** zod's issues as one line each: 'hooks.2.event: expected one of …'. */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(file)'}: ${issue.message}`).join('\n');
}
