import { parse as parseYaml } from 'yaml';
import { z } from 'zod';

/** A provider by name: its wire type, where it is, and its pool of keys (named by variable). */
export interface NamedProvider {
  name: string;
  type: 'openai' | 'anthropic';
  baseURL: string | undefined;
  /** Tried in order; `name` is the environment variable, the only form a key is ever shown in. */
  keys: { name: string; value: string }[];
  /**
   * Where an operator sets this provider up, in words, for the one line a person gets when every
   * call failed: the key variables (never a key) and the base URL's setting.
   */
  setup: { keys: string; baseURL: string };
}

const PROVIDER_NAME = /^[a-z][a-z0-9_-]{0,39}$/;
const envName = z.string().regex(/^[A-Z_][A-Z0-9_]{0,127}$/, { error: 'expected an environment variable name such as OPENAI_KEY_2' });

const entry = z.strictObject({
  type: z.enum(['openai', 'anthropic'], { error: 'expected openai or anthropic' }),
  base_url: z.url({ protocol: /^https?$/, error: 'expected an http(s) URL' }).optional(),
  api_key_env: envName.optional(),
  api_key_envs: z.array(envName).min(1).optional(),
});

const document = z.record(z.string().regex(PROVIDER_NAME, { error: 'a provider name is lowercase letters, digits, - and _' }), entry);

/** A providers file or a model chain that cannot be used; the message names the file and the field. */
export class ProviderConfigError extends Error {
  override readonly name = 'ProviderConfigError';
}

/** The variables the implicit `openai` and `anthropic` providers read. */
const IMPLICIT = {
  openai: { key: 'OPENAI_API_KEY', url: 'OPENAI_BASE_URL' },
  anthropic: { key: 'ANTHROPIC_API_KEY', url: 'ANTHROPIC_BASE_URL' },
} as const;

/** A local server without a key still needs one for the SDKs; it is named as none. */
const NO_KEY = { name: '(none)', value: 'unused' };

function implicitProviders(env: Readonly<Record<string, string | undefined>>): Map<string, NamedProvider> {
  const providers = new Map<string, NamedProvider>();
  for (const type of ['openai', 'anthropic'] as const) {
    const value = env[IMPLICIT[type].key];
    providers.set(type, {
      name: type,
      type,
      baseURL: env[IMPLICIT[type].url] || undefined,
      keys: value ? [{ name: IMPLICIT[type].key, value }] : [NO_KEY],
      setup: { keys: IMPLICIT[type].key, baseURL: IMPLICIT[type].url },
    });
  }
  return providers;
}

const keyVariables = (spec: z.infer<typeof entry>): string[] => spec.api_key_envs ?? (spec.api_key_env === undefined ? [] : [spec.api_key_env]);

function keysOf(name: string, spec: z.infer<typeof entry>, env: Readonly<Record<string, string | undefined>>, source: string): NamedProvider['keys'] {
  const names = keyVariables(spec);
  if (names.length === 0) return [NO_KEY];
  if (new Set(names).size !== names.length) throw new ProviderConfigError(`${source}: ${name}.api_key_envs: a variable is named twice`);
  return names.map((variable, index) => {
    const value = env[variable];
    const field = spec.api_key_envs ? `${name}.api_key_envs[${index}]` : `${name}.api_key_env`;
    if (!value) throw new ProviderConfigError(`${source}: ${field}: the variable ${variable} is not set`);
    return { name: variable, value };
  });
}

/** A declared provider's settings as the operator wrote them: its key variables, or where to name one. */
function setupOf(name: string, spec: z.infer<typeof entry>): NamedProvider['setup'] {
  const names = keyVariables(spec);
  const keys = names.length > 0 ? `${names.join(', ')} (provider ${name} of HERALD_PROVIDERS_FILE)` : `${name}.api_key_env of HERALD_PROVIDERS_FILE`;
  return { keys, baseURL: `${name}.base_url of HERALD_PROVIDERS_FILE` };
}

/**
 * The providers a deployment can call: `openai` and `anthropic` from OPENAI_* / ANTHROPIC_* as
 * always, then those of HERALD_PROVIDERS_FILE (YAML or JSON, `{name: {type, base_url?,
 * api_key_env?, api_key_envs?}}`, optionally under a top-level `providers:`), which may redefine
 * the two. Secrets stay in the environment: the file names variables, and a named one that is not
 * set is an error here, at start, naming the field.
 */
export function loadProviders(file: { path: string; text: string } | undefined, env: Readonly<Record<string, string | undefined>>): Map<string, NamedProvider> {
  const providers = implicitProviders(env);
  if (!file) return providers;
  const source = `HERALD_PROVIDERS_FILE (${file.path})`;
  for (const [name, spec] of Object.entries(parseProvidersFile(file, source))) {
    providers.set(name, { name, type: spec.type, baseURL: spec.base_url, keys: keysOf(name, spec, env, source), setup: setupOf(name, spec) });
  }
  return providers;
}

function parseProvidersFile(file: { path: string; text: string }, source: string): z.infer<typeof document> {
  let raw: unknown;
  try {
    raw = parseYaml(file.text);
  } catch (error) {
    throw new ProviderConfigError(`${source}: not YAML or JSON: ${(error as Error).message.split('\n')[0]}`);
  }
  const body = typeof raw === 'object' && raw !== null && 'providers' in raw ? (raw as { providers: unknown }).providers : raw;
  const parsed = document.safeParse(body ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ProviderConfigError(`${source}: ${issue?.path.join('.') || 'the file'}: ${issue?.message ?? 'is invalid'}`);
  }
  return parsed.data;
}

/**
 * The names a model reference may use, read without the keys: the ingress checks a profile's
 * models against them, while only the processes that call models need the keys set.
 */
export function declaredProviderNames(file: { path: string; text: string } | undefined): Set<string> {
  const names = new Set<string>(Object.keys(IMPLICIT));
  if (file) for (const name of Object.keys(parseProvidersFile(file, `HERALD_PROVIDERS_FILE (${file.path})`))) names.add(name);
  return names;
}

/** One model of a failover chain and the provider that serves it. */
export interface ChainEntry {
  /** `provider/model` as configured. */
  ref: string;
  provider: NamedProvider;
  model: string;
}

/** Resolves `provider/model` references; `fieldOf` names where each came from, for the error. */
export function modelChain(refs: readonly string[], providers: ReadonlyMap<string, NamedProvider>, fieldOf: (index: number) => string): ChainEntry[] {
  return refs.map((ref, index) => {
    const slash = ref.indexOf('/');
    const name = ref.slice(0, slash);
    const provider = providers.get(name);
    if (slash < 1 || !provider) {
      throw new ProviderConfigError(`${fieldOf(index)}: ${ref} names the provider ${JSON.stringify(name)}, which is not declared (known: ${[...providers.keys()].join(', ')})`);
    }
    return { ref, provider, model: ref.slice(slash + 1) };
  });
}
