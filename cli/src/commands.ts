import type { Config } from '@herald/core';
import { runAdminCommand } from './admin-commands.ts';
import { runAudit } from './audit-command.ts';
import { runChat } from './chat-command.ts';
import { runCronCommand } from './cron-command.ts';
import { runDeadLetters } from './dead-letters-command.ts';
import { runRuns } from './runs-command.ts';
import { runDoctor } from './doctor-command.ts';
import { runImport } from './import-command.ts';
import { runIngressRole, runReviewerRole, runSchedulerRole, runUp, runWorkerRole } from './role-commands.ts';
import type { RoleContext } from './role-commands.ts';
import { prepareDatabase } from './roles.ts';
import { runSearch } from './search-command.ts';
import { runSkillCommand } from './skill-commands.ts';
import { runStatus } from './status-command.ts';
import { runToolsCommand } from './tools-command.ts';

export interface Command {
  /** The line `herald help` shows. */
  summary: string;
  /** A role that runs until a signal (tracing on, the embedded Postgres stopped by its shutdown). */
  longRunning?: boolean;
  /** Uses the database: the run mode is settled (an embedded Postgres started) before it runs. */
  database?: boolean;
  /** Runs the command; a number returned is the process's exit code. */
  run: (args: string[], context: RoleContext) => Promise<void | number>;
}

async function deployDiscord(config: Config): Promise<void> {
  if (!config.platforms.discord) throw new Error('DISCORD_BOT_TOKEN is not set');
  // Only this command needs discord.js here: loaded on demand, not by every role at start.
  const { deployDiscordCommands } = await import('@herald/platforms');
  const count = await deployDiscordCommands(config.platforms.discord);
  process.stdout.write(`registered ${count} slash commands\n`);
}

/**
 * Every `herald` command, in the order `herald help` lists them: adding one is one entry here.
 * `args` are the words after the command's name.
 */
export const COMMANDS: Readonly<Record<string, Command>> = {
  up: { summary: 'every role in one process (runs migrations first)', longRunning: true, database: true, run: (_args, context) => runUp(context) },
  ingress: { summary: 'the HTTP API', longRunning: true, database: true, run: (_args, context) => runIngressRole(context) },
  worker: { summary: 'the run queue consumer', longRunning: true, database: true, run: (_args, context) => runWorkerRole(context) },
  reviewer: { summary: 'the background review consumer (memory and skill distillation)', longRunning: true, database: true, run: (_args, context) => runReviewerRole(context) },
  scheduler: { summary: 'cron jobs (fire once across replicas, deliver reports) and the reconciler sweep', longRunning: true, database: true, run: (_args, context) => runSchedulerRole(context) },
  migrate: { summary: 'apply database migrations and exit', database: true, run: (_args, { config, logger }) => prepareDatabase(config, logger) },
  chat: { summary: 'interactive terminal chat against the API (/new, /quit)', run: (_args, { config }) => runChat(config) },
  memory: { summary: 'list memory entries (--profile P, --user ID) or delete one (memory delete ID)', database: true, run: (args, { config }) => runAdminCommand('memory', args, config) },
  prompt: { summary: "print a session's stored system prompt", database: true, run: (args, { config }) => runAdminCommand('prompt', args, config) },
  profile: { summary: "show or edit a profile's identity and context documents", database: true, run: (args, { config }) => runAdminCommand('profile', args, config) },
  tools: { summary: 'the toolsets and tools a session is offered (--platform, --user); tools policy FILE sets them', database: true, run: (args, { config }) => runToolsCommand(args, config) },
  skills: { summary: "list, show, export, import, pin or unpin a profile's skills", database: true, run: (args, { config }) => runSkillCommand('skills', args, config) },
  reviews: { summary: 'list background reviews and what they saved', database: true, run: (args, { config }) => runSkillCommand('reviews', args, config) },
  'discord-commands': { summary: 'register the chat commands as Discord slash commands (once per deployment)', run: (_args, { config }) => deployDiscord(config) },
  cron: { summary: 'cron jobs: list, add, pause, resume, remove, run, runs (herald cron help)', database: true, run: (args, { config }) => runCronCommand(args, config) },
  search: { summary: 'search past conversations (herald search QUERY --user ID; see herald search --help)', database: true, run: (args, { config }) => runSearch(args, config) },
  import: { summary: 'bring a Hermes install along: herald import hermes HERMES_HOME --user ID', database: true, run: (args, { config }) => runImport(args, config) },
  status: { summary: 'the cluster through the API: live roles, queue depths, oldest waiting turn, dead letters (--json)', run: (args, { config }) => runStatus(args, config) },
  doctor: { summary: 'which mode runs (embedded or external Postgres, queue on Redis or Postgres) and whether each service answers', run: (_args, { config }) => runDoctor(config) },
  audit: { summary: 'the audit trail: tool calls, approvals, hook decisions, admin changes (herald audit --help)', run: (args, { config }) => runAudit(args, config) },
  'dead-letters': { summary: 'what failed for good and why: updates, runs, deliveries, reviews, cron jobs (--json, --limit N)', run: (args, { config }) => runDeadLetters(args, config) },
  runs: { summary: "delegate_task's child runs: list (--session ID, --status S, --json), show RUN_ID, cancel RUN_ID", run: (args, { config }) => runRuns(args, config) },
};

export const USAGE = `usage: herald <command>\n\ncommands:\n${Object.entries(COMMANDS)
  .map(([name, command]) => `  ${name.padEnd(9)}  ${command.summary}\n`)
  .join('')}`;
