import { CHAT_PLATFORMS, PLATFORM_FACTS } from '@herald/core';
import type { ChatPlatform, Config } from '@herald/core';
import type { RoleContext } from './role-commands.ts';

// Every command's module is imported when that command runs, not when the CLI starts: a role
// process then loads no admin, chat or import code, and `herald chat` no role wiring
// (docs/decisions/2026-12-02-role-startup.md).
const roles = () => import('./role-commands.ts');
const skills = () => import('./skill-commands.ts');
const admin = () => import('./admin-commands.ts');

export interface Command {
  /** The line `herald help` shows. */
  summary: string;
  /** A role that runs until a signal (tracing on, the embedded Postgres stopped by its shutdown). */
  longRunning?: boolean;
  /** Uses the database: the run mode is settled (an embedded Postgres started) before it runs. */
  database?: boolean;
  /** Serves the HTTP API: its PORT is checked free before anything starts. */
  api?: boolean;
  /** The detailed usage `herald <command> --help` prints (the summary when absent). */
  help?: () => Promise<string>;
  /** Runs the command; a number returned is the process's exit code. */
  run: (args: string[], context: RoleContext) => Promise<void | number>;
}

async function deployCommands(config: Config, platform: ChatPlatform): Promise<void> {
  // Only this command needs the platform's SDK here: loaded on demand, not by every role at start.
  const { PLATFORM_ADAPTERS } = await import('@herald/platforms');
  const adapter = PLATFORM_ADAPTERS[platform];
  if (!adapter.deployCommands) throw new Error(`${PLATFORM_FACTS[platform].label} has no slash commands to register`);
  const count = await adapter.deployCommands(config.platforms);
  process.stdout.write(`registered ${count} slash commands\n`);
}

/** `herald <platform>-commands` for each platform whose chat commands are slash commands (the registry says which). */
const SLASH_COMMAND_DEPLOYS: Readonly<Record<string, Command>> = Object.fromEntries(
  CHAT_PLATFORMS.filter((platform) => PLATFORM_FACTS[platform].slashCommands).map((platform): [string, Command] => [
    `${platform}-commands`,
    { summary: `register the chat commands as ${PLATFORM_FACTS[platform].label} slash commands (once per deployment)`, run: (_args, { config }) => deployCommands(config, platform) },
  ]),
);

/**
 * Every `herald` command, in the order `herald help` lists them: adding one is one entry here.
 * `args` are the words after the command's name.
 */
export const COMMANDS: Readonly<Record<string, Command>> = {
  init: {
    summary: 'guided setup: model, chat platforms, where the data lives; checks each answer and writes .env (--non-interactive for scripts)',
    help: async () => (await import('./init-command.ts')).INIT_USAGE,
    run: async (args) => (await import('./init-command.ts')).runInit(args),
  },
  up: { summary: 'every role in one process (runs migrations first)', longRunning: true, api: true, database: true, run: async (_args, context) => (await roles()).runUp(context) },
  ingress: { summary: 'the HTTP API', longRunning: true, api: true, database: true, run: async (_args, context) => (await roles()).runIngressRole(context) },
  worker: { summary: 'the run queue consumer', longRunning: true, database: true, run: async (_args, context) => (await roles()).runWorkerRole(context) },
  reviewer: { summary: 'the background review consumer (memory and skill distillation)', longRunning: true, database: true, run: async (_args, context) => (await roles()).runReviewerRole(context) },
  scheduler: {
    summary: 'cron jobs (fire once across replicas, deliver reports) and the reconciler sweep',
    longRunning: true,
    database: true,
    run: async (_args, context) => (await roles()).runSchedulerRole(context),
  },
  migrate: { summary: 'apply database migrations and exit', database: true, run: async (_args, { config, logger }) => (await import('./role-wiring.ts')).prepareDatabase(config, logger) },
  backup: {
    summary: "a consistent backup of Herald's data to FILE, with a manifest (herald backup FILE)",
    database: true,
    run: async (args, { config }) => (await import('./backup-command.ts')).runBackup(args, config),
  },
  restore: {
    summary: 'restore a backup FILE into an empty database (herald restore FILE)',
    database: true,
    run: async (args, { config, logger }) => (await import('./backup-command.ts')).runRestore(args, config, logger),
  },
  chat: { summary: 'interactive terminal chat against the API (/new, /quit)', run: async (_args, { config }) => (await import('./chat-command.ts')).runChat(config) },
  memory: {
    summary: 'list memory entries (--profile P, --user ID) or delete one (memory delete ID)',
    database: true,
    help: async () => (await admin()).ADMIN_USAGE,
    run: async (args, { config }) => (await admin()).runAdminCommand('memory', args, config),
  },
  prompt: {
    summary: "print a session's stored system prompt",
    database: true,
    help: async () => (await admin()).ADMIN_USAGE,
    run: async (args, { config }) => (await admin()).runAdminCommand('prompt', args, config),
  },
  profile: {
    summary: "show or edit a profile's identity and context documents",
    database: true,
    help: async () => (await admin()).ADMIN_USAGE,
    run: async (args, { config }) => (await admin()).runAdminCommand('profile', args, config),
  },
  profiles: {
    summary: 'list, show, create (--from OTHER) or delete profiles (herald profiles list)',
    database: true,
    help: async () => (await import('./profiles-command.ts')).PROFILES_USAGE,
    run: async (args, { config }) => (await import('./profiles-command.ts')).runProfilesCommand(args, config),
  },
  people: {
    summary: 'people and their roles: add, list, show, grant, revoke, remove, link-code, export, erase',
    database: true,
    help: async () => (await import('./people-command.ts')).PEOPLE_USAGE,
    run: async (args, { config }) => (await import('./people-command.ts')).runPeopleCommand(args, config),
  },
  tokens: {
    summary: 'personal API tokens: create --person ID [--expires 30d] [--name laptop], list, revoke',
    database: true,
    help: async () => (await import('./tokens-command.ts')).TOKENS_USAGE,
    run: async (args, { config }) => (await import('./tokens-command.ts')).runTokensCommand(args, config),
  },
  bindings: {
    summary: 'which profile inbound traffic goes to: list, add PROFILE --platform ..., remove INDEX',
    database: true,
    help: async () => (await import('./bindings-command.ts')).BINDINGS_USAGE,
    run: async (args, { config }) => (await import('./bindings-command.ts')).runBindingsCommand(args, config),
  },
  tools: {
    summary: 'the toolsets and tools a session is offered (--platform, --user); tools policy FILE sets them',
    database: true,
    help: async () => (await import('./tools-command.ts')).TOOLS_USAGE,
    run: async (args, { config }) => (await import('./tools-command.ts')).runToolsCommand(args, config),
  },
  mcp: {
    summary: 'MCP servers: list (each server, whether it answers, its tools), test NAME (connect and list)',
    database: true,
    help: async () => (await import('./mcp-command.ts')).MCP_USAGE,
    run: async (args, { config }) => (await import('./mcp-command.ts')).runMcpCommand(args, config),
  },
  skills: {
    summary: "list, show, remove, export, import, pin, unpin, share or unshare a profile's skills",
    database: true,
    help: async () => (await skills()).SKILLS_USAGE,
    run: async (args, { config }) => (await skills()).runSkillCommand('skills', args, config),
  },
  reviews: {
    summary: 'list background reviews and what they saved',
    database: true,
    help: async () => (await skills()).SKILLS_USAGE,
    run: async (args, { config }) => (await skills()).runSkillCommand('reviews', args, config),
  },
  ...SLASH_COMMAND_DEPLOYS,
  cron: {
    summary: 'cron jobs: list, add, pause, resume, remove, run, runs (herald cron help)',
    database: true,
    help: async () => (await import('./cron-command.ts')).CRON_USAGE,
    run: async (args, { config }) => (await import('./cron-command.ts')).runCronCommand(args, config),
  },
  search: {
    summary: 'search past conversations (herald search QUERY --user ID; see herald search --help)',
    database: true,
    help: async () => (await import('./search-command.ts')).SEARCH_USAGE,
    run: async (args, { config }) => (await import('./search-command.ts')).runSearch(args, config),
  },
  import: {
    summary: 'bring a Hermes install along: herald import hermes HERMES_HOME --user ID',
    database: true,
    help: async () => (await import('./import-command.ts')).IMPORT_USAGE,
    run: async (args, { config }) => (await import('./import-command.ts')).runImport(args, config),
  },
  export: {
    summary: 'the way back: herald export hermes DIR --user ID writes a Hermes home',
    database: true,
    help: async () => (await import('./export-command.ts')).EXPORT_USAGE,
    run: async (args, { config }) => (await import('./export-command.ts')).runExport(args, config),
  },
  status: {
    summary: 'the cluster through the API: live roles, queue depths, oldest waiting turn, dead letters (--json)',
    run: async (args, { config }) => (await import('./status-command.ts')).runStatus(args, config),
  },
  doctor: {
    summary: 'which mode runs (embedded or external Postgres, queue on Redis or Postgres) and whether each service answers',
    run: async (_args, { config }) => (await import('./doctor-command.ts')).runDoctor(config),
  },
  audit: {
    summary: 'the audit trail: tool calls, approvals, hook decisions, admin changes (herald audit --help)',
    help: async () => (await import('./audit-command.ts')).AUDIT_USAGE,
    run: async (args, { config }) => (await import('./audit-command.ts')).runAudit(args, config),
  },
  'dead-letters': {
    summary: 'what failed for good and why: updates, runs, deliveries, reviews, cron jobs (--json, --limit N)',
    help: async () => (await import('./dead-letters-command.ts')).DEAD_LETTERS_USAGE,
    run: async (args, { config }) => (await import('./dead-letters-command.ts')).runDeadLetters(args, config),
  },
  usage: {
    summary: 'model tokens and cost: --group-by person|profile|model|day, --from, --to (herald usage --help)',
    help: async () => (await import('./usage-command.ts')).USAGE_USAGE,
    run: async (args, { config }) => (await import('./usage-command.ts')).runUsage(args, config),
  },
  budgets: {
    summary: 'money budgets per person and profile, per day and month: list, set, remove (herald budgets --help)',
    help: async () => (await import('./usage-command.ts')).USAGE_USAGE,
    run: async (args, { config }) => (await import('./usage-command.ts')).runBudgets(args, config),
  },
  runs: {
    summary: "delegate_task's child runs: list (--session ID, --status S, --json), show RUN_ID, cancel RUN_ID",
    help: async () => (await import('./runs-command.ts')).RUNS_USAGE,
    run: async (args, { config }) => (await import('./runs-command.ts')).runRuns(args, config),
  },
};

export const USAGE = `usage: herald <command>\n\ncommands:\n${Object.entries(COMMANDS)
  .map(([name, command]) => `  ${name.padEnd(9)}  ${command.summary}\n`)
  .join('')}`;
