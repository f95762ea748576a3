import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { apiUserId } from '@herald/core';
import type { Config } from '@herald/core';
import { createDb } from '@herald/db';
import { BrowserSessions, openSandbox, ToolExposure, toolPolicySchema } from '@herald/tools';
import type { CallerRole } from '@herald/tools';
import { profileRecord, updateProfileSettings } from '@herald/profiles';
import { buildToolRegistry } from './tool-registry.ts';
import { usageError } from './setup-error.ts';

export const TOOLS_USAGE = `herald tools [--profile P] [--platform X] [--user ID] [--role chat|cron|review]
    the toolsets and the tools a session on that platform is offered (and, with --user, may run)
herald tools policy FILE [--profile P]
    set the profile's tool policy from a JSON file (see docs/tools.md, Toolsets and permissions)`;

function fail(message: string): never {
  throw usageError(message, TOOLS_USAGE);
}

/** Operators' view of exposure: the same resolution the worker runs, printed. */
export async function runToolsCommand(argv: string[], config: Config): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      profile: { type: 'string', default: 'main' },
      platform: { type: 'string', default: 'api' },
      user: { type: 'string' },
      role: { type: 'string', default: 'chat' },
    },
    allowPositionals: true,
  });
  const role = values.role as CallerRole;
  if (!['chat', 'cron', 'review'].includes(role)) fail(`--role: expected chat, cron or review, got '${role}'`);
  const profileId = values.profile ?? 'main';
  const db = createDb({ url: config.database.url, maxConnections: 2 });
  const out = (text: string) => process.stdout.write(`${text}\n`);
  try {
    const profile = await profileRecord(db, profileId);
    if (!profile) fail(`no profile '${profileId}'`);
    if (positionals[0] === 'policy') {
      const file = positionals[1] ?? fail('tools policy needs a JSON file');
      let raw: unknown;
      try {
        raw = JSON.parse(await readFile(file, 'utf8'));
      } catch (error) {
        fail(`${file}: ${(error as Error).message}`);
      }
      const parsed = toolPolicySchema.safeParse(raw);
      if (!parsed.success) {
        fail(parsed.error.issues.map((issue) => `${['tool_policy', ...issue.path].join('.')}: ${issue.message}`).join('\n'));
      }
      await updateProfileSettings(db, profileId, { tool_policy: parsed.data });
      out(`tool policy of ${profileId} updated`);
      return;
    }
    if (positionals.length > 0) fail(`unknown tools subcommand '${positionals[0]}'`);
    const toolSandbox = await openSandbox({ settings: config.tools.sandbox, env: process.env, workspaceRoot: config.tools.workspaceRoot });
    // Listed, never run: delegate_task here has no queue to wake children on; the browser is never launched.
    const browser = new BrowserSessions({ chromiumPath: config.tools.chromiumPath, idleMs: config.tools.browserIdleMs, allowlist: config.tools.webAllowlist });
    const { registry, pluginTools } = await buildToolRegistry(config, toolSandbox, () => Promise.reject(new Error('herald tools runs no tool')), { browser });
    const exposure = new ToolExposure(registry, { pluginTools, env: process.env });
    const policy = toolPolicySchema.safeParse(profile.tool_policy);
    if (!policy.success) fail(`the stored tool policy of ${profileId} is invalid; workers offer only the 'safe' toolset`);
    const input = { policy: policy.data, platform: values.platform ?? 'api', role, userId: values.user === undefined ? undefined : apiUserId(values.user) };
    const { enabled, disabled } = exposure.toolsets(input);
    out(`profile ${profileId}, platform ${input.platform}, role ${role}${input.userId ? `, person ${input.userId}` : ''}`);
    out(`enabled toolsets:  ${enabled.join(', ') || '(none)'}`);
    out(`disabled toolsets: ${disabled.join(', ') || '(none)'}`);
    out(`tools: ${exposure.resolve(input).join(', ') || '(none)'}`);
    const missing = registry.names().filter((name) => !exposure.isAvailable(name));
    if (missing.length > 0) out(`not available here (requirements missing): ${missing.join(', ')}`);
    if (toolSandbox.notice !== null) out(`sandbox: ${toolSandbox.notice}`);
    out('\ntoolsets:');
    for (const [name, toolset] of Object.entries(exposure.catalog(policy.data))) {
      const parts = [...toolset.tools, ...toolset.includes.map((include) => `@${include}`)];
      out(`  ${name.padEnd(16)} ${parts.join(' ')}${toolset.description ? `  — ${toolset.description}` : ''}`);
    }
  } finally {
    await db.destroy();
  }
}
