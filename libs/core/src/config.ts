import type { z } from 'zod';
import { apiSection, isLoopbackHost } from './config/api.ts';
import { attachmentsSection } from './config/attachments.ts';
import { compressionSection } from './config/compression.ts';
import { databaseSection } from './config/database.ts';
import { delegationSection } from './config/delegation.ts';
import { hooksSection } from './config/hooks.ts';
import { limitsSection } from './config/limits.ts';
import { mcpSection } from './config/mcp.ts';
import { modelSection } from './config/model.ts';
import { observabilitySection } from './config/observability.ts';
import { peopleSection } from './config/people.ts';
import { PlatformsFileError, platformsSection, withPlatformAccounts } from './config/platforms.ts';
import type { PlatformsConfig } from './config/platforms.ts';
import { redisSection } from './config/redis.ts';
import { rolesSection } from './config/roles.ts';
import { refusedGrants } from './config/sandbox.ts';
import { toolsSection } from './config/tools.ts';
import { usageSection } from './config/usage.ts';
import { sessionResetSection } from './config/session-reset.ts';
import { signInSection } from './config/sign-in.ts';

/**
 * The config in sections, one zod schema each (libs/core/src/config/): each reads its own
 * environment variables and builds its part; a role reads only the sections it needs.
 */
const SECTIONS = {
  database: databaseSection,
  redis: redisSection,
  api: apiSection,
  limits: limitsSection,
  people: peopleSection,
  model: modelSection,
  platforms: platformsSection,
  roles: rolesSection,
  tools: toolsSection,
  observability: observabilitySection,
  hooks: hooksSection,
  compression: compressionSection,
  sessionReset: sessionResetSection,
  delegation: delegationSection,
  mcp: mcpSection,
  signIn: signInSection,
  usage: usageSection,
  attachments: attachmentsSection,
};

export type Config = { readonly [K in keyof typeof SECTIONS]: Readonly<z.output<(typeof SECTIONS)[K]>> } & {
  /**
   * The environment the config was read from, where variables a file names are looked up at start
   * (a providers file's api_key_env). Not enumerable: a config that is logged or serialised never
   * carries it.
   */
  readonly environment: Readonly<Record<string, string | undefined>>;
};

/** Every environment variable Herald reads, from the sections' schemas. */
export const SETTING_NAMES: readonly string[] = [...new Set(Object.values(SECTIONS).flatMap((section) => Object.keys(section.in.shape)))];

/** Thrown when the environment is invalid; `message` is one line per bad variable. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * The HTTP API refuses to listen beyond loopback without HERALD_API_TOKEN: an open API on the
 * network is anyone's agent. Checked where the API starts (the ingress), not in loadConfig, so a
 * worker that shares HOST from a config map but holds no API token still starts.
 */
export function assertSafeBind(config: Pick<Config, 'api'>): void {
  const { host, token } = config.api;
  if (token !== undefined || isLoopbackHost(host)) return;
  throw new ConfigError(
    `HOST: ${host} is reachable from other machines and HERALD_API_TOKEN is not set, so the API would be open to anyone who can reach it; set HERALD_API_TOKEN (at least 8 characters) or bind to 127.0.0.1`,
  );
}

/**
 * One line per problem, naming the variable and what it expects, never its value: a value may be
 * a secret (a password inside DATABASE_URL, a bot token), and this message goes to logs.
 */
function describeIssue(issue: z.core.$ZodIssue, env: Record<string, string | undefined>): string {
  const key = String(issue.path[0] ?? 'environment');
  return `${key}: ${issue.message}${env[key] === undefined ? ', it is not set' : ''}`;
}

/** The names HERALD_SANDBOX_ENV grants to tools may not include any setting Herald itself reads. */
function grantProblems(config: Config): string[] {
  const refused = refusedGrants(config.tools.sandbox.env, SETTING_NAMES);
  if (refused.length === 0) return [];
  return [`HERALD_SANDBOX_ENV: ${refused.join(', ')} ${refused.length === 1 ? 'is a Herald setting' : 'are Herald settings'}, never passed to tools`];
}

/**
 * Parses the environment once into a frozen Config. Every invalid variable is reported, one line
 * each, naming the variable and what is wrong, so a bad deployment fails at start and says why.
 */
function withEnvironment(sections: Record<string, unknown>, environment: Config['environment']): Config {
  Object.defineProperty(sections, 'environment', { value: environment, enumerable: false });
  return Object.freeze(sections) as Config;
}

/** A config with some sections replaced (the start settling a mode); keeps its environment. */
export function reconfigured(config: Config, changes: Partial<Omit<Config, 'environment'>>): Config {
  return withEnvironment({ ...config, ...changes }, config.environment);
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const problems: string[] = [];
  const sections: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(SECTIONS)) {
    const parsed = schema.safeParse(env);
    if (parsed.success) sections[name] = Object.freeze(parsed.data);
    else problems.push(...parsed.error.issues.map((issue) => describeIssue(issue, env)));
  }
  if (sections.platforms !== undefined) {
    try {
      sections.platforms = Object.freeze(withPlatformAccounts(sections.platforms as PlatformsConfig, env));
    } catch (error) {
      if (!(error instanceof PlatformsFileError)) throw error;
      problems.push(error.message);
    }
  }
  const config = withEnvironment(sections, Object.freeze({ ...env }));
  if (problems.length === 0) problems.push(...grantProblems(config));
  if (problems.length > 0) throw new ConfigError(problems.join('\n'));
  return config;
}
