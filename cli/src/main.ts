import { assertSafeBind, ConfigError, createLogger, exitOnSignals, loadConfig, Shutdown } from '@herald/core';
import type { Config, Logger } from '@herald/core';

import { runAdminCommand } from './admin-commands.ts';
import { runChat } from './chat-command.ts';
import { runToolsCommand } from './tools-command.ts';
import { runSkillCommand } from './skill-commands.ts';
import { openDb, prepareDatabase, startIngress, startReviewer, startScheduler, startWorker } from './roles.ts';
import { deployDiscordCommands } from '@herald/platforms';
import { runCronCommand } from './cron-command.ts';
import { runSearch } from './search-command.ts';
import { runImport } from './import-command.ts';
import { startTracing, traceLogFields } from '@herald/telemetry';
import { startRoleHeartbeat, startRoleOpsServer } from './observability.ts';
import { runStatus } from './status-command.ts';
import { enterRunMode } from './run-mode.ts';
import type { RunMode } from './run-mode.ts';
import { runDoctor } from './doctor-command.ts';
import { runAudit } from './audit-command.ts';
import { runDeadLetters } from './dead-letters-command.ts';
import { runRuns } from './runs-command.ts';

const USAGE = `usage: herald <command>

commands:
  up         every role in one process (runs migrations first)
  ingress    the HTTP API
  worker     the run queue consumer
  reviewer   the background review consumer (memory and skill distillation)
  scheduler  cron jobs (fire once across replicas, deliver reports) and the reconciler sweep
  migrate    apply database migrations and exit
  chat       interactive terminal chat against the API (/new, /quit)
  memory     list memory entries (--profile P, --user ID) or delete one (memory delete ID)
  prompt     print a session's stored system prompt
  profile    show or edit a profile's identity and context documents
  tools      the toolsets and tools a session is offered (--platform, --user); tools policy FILE sets them
  skills     list, show, export, import, pin or unpin a profile's skills
  reviews    list background reviews and what they saved
  discord-commands  register the chat commands as Discord slash commands (once per deployment)
  cron       cron jobs: list, add, pause, resume, remove, run, runs (herald cron help)
  search     search past conversations (herald search QUERY --user ID; see herald search --help)
  import     bring a Hermes install along: herald import hermes HERMES_HOME --user ID
  status     the cluster through the API: live roles, queue depths, oldest waiting turn, dead letters (--json)
  doctor     which mode runs (embedded or external Postgres, queue on Redis or Postgres) and whether each service answers
  audit      the audit trail: tool calls, approvals, hook decisions, admin changes (herald audit --help)
  dead-letters  what failed for good and why: updates, runs, deliveries, reviews, cron jobs (--json, --limit N)
  runs       delegate_task's child runs: list (--session ID, --status S, --json), show RUN_ID, cancel RUN_ID
`;

const LONG_RUNNING = new Set(['up', 'ingress', 'worker', 'reviewer', 'scheduler']);
/** Commands that use the database, so settle the run mode (and start an embedded Postgres) first. */
const WITH_DATABASE = new Set([...LONG_RUNNING, 'migrate', 'memory', 'prompt', 'profile', 'tools', 'skills', 'reviews', 'cron', 'search', 'import']);
let stopTracing: (() => Promise<void>) | null = null;

let runMode: RunMode | null = null;

function newShutdown(config: Config, logger: Logger): Shutdown {
  const shutdown = new Shutdown({ logger, deadlineMs: config.roles.shutdownTimeoutMs });
  // Registered first, so it runs last and flushes the spans of everything else's shutdown.
  if (stopTracing) shutdown.add('tracing', stopTracing);
  // Next to last: the embedded Postgres outlives every role that uses it.
  const mode = runMode;
  if (mode) shutdown.add('embedded postgres', () => mode.stop());
  exitOnSignals(shutdown, logger);
  return shutdown;
}

async function main(argv: string[]): Promise<void> {
  const command = argv[0];
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(USAGE);
    return;
  }
  const loaded = loadConfig();
  const config = await withRunMode(command, loaded);
  if (runMode === null) return runCommand(command, argv, config);
  const mode: RunMode = runMode;
  try {
    await runCommand(command, argv, config);
  } catch (error) {
    await mode.stop();
    throw error;
  }
  // A long-running role stops the embedded Postgres in its shutdown; a one-shot command here.
  if (!LONG_RUNNING.has(command)) await mode.stop();
}

/** Settles the run mode (starting the embedded Postgres if it is the one) and says which runs. */
async function withRunMode(command: string, config: Config): Promise<Config> {
  if (!WITH_DATABASE.has(command)) return config;
  const logger = createLogger({ level: config.observability.logLevel, service: `herald-${command}` });
  runMode = await enterRunMode(config, logger);
  if (LONG_RUNNING.has(command)) {
    logger.info({ database: runMode.config.database.mode, queue: runMode.config.redis.queueMode }, runMode.line);
    if (command === 'up') process.stderr.write(`${runMode.line}\n`);
  }
  return runMode.config;
}

async function runCommand(command: string, argv: string[], config: Config): Promise<void> {
  // Off (nothing loaded) unless OTEL_EXPORTER_OTLP_ENDPOINT is set.
  if (LONG_RUNNING.has(command)) stopTracing = await startTracing({ endpoint: config.observability.otlpEndpoint, serviceName: `herald-${command}` });
  const logger = createLogger({ level: config.observability.logLevel, service: `herald-${command}`, ...(stopTracing ? { mixin: traceLogFields } : {}) });
  process.on('uncaughtException', (error) => {
    // The process state is unknown after this; exit and let the supervisor restart us.
    logger.error({ err: error }, 'uncaught exception');
    process.exit(1);
  });
  switch (command) {
    case 'migrate': {
      await prepareDatabase(config, logger);
      return;
    }
    case 'up': {
      const started = performance.now();
      // Before anything starts: the ingress would refuse later, after the other roles came up.
      assertSafeBind(config);
      await prepareDatabase(config, logger);
      const shutdown = newShutdown(config, logger);
      const db = openDb(config, logger, shutdown);
      await startWorker(config, logger, shutdown, db);
      await startReviewer(config, logger, shutdown, db);
      await startScheduler(config, logger, shutdown, db);
      const address = await startIngress(config, logger, shutdown, db);
      startRoleHeartbeat(config, logger, shutdown, ['ingress', 'worker', 'reviewer', 'scheduler']);
      if (!config.model.endpoint) logger.warn({}, 'no model configured (HERALD_MODEL); messages get a note on how to set one');
      logger.info({ address, startMs: Math.round(performance.now() - started) }, `Herald is up: API on ${address}`);
      process.stderr.write(`Herald is up. API on ${address} — try: npx herald chat\n`);
      return;
    }
    case 'ingress': {
      const shutdown = newShutdown(config, logger);
      const db = openDb(config, logger, shutdown);
      const address = await startIngress(config, logger, shutdown, db);
      startRoleHeartbeat(config, logger, shutdown, ['ingress']);
      logger.info({ address }, `ingress listening on ${address}`);
      return;
    }
    case 'worker': {
      const shutdown = newShutdown(config, logger);
      const db = openDb(config, logger, shutdown);
      await startWorker(config, logger, shutdown, db);
      await startRoleOpsServer(config, logger, shutdown, db);
      startRoleHeartbeat(config, logger, shutdown, ['worker']);
      logger.info({ concurrency: config.roles.worker.concurrency }, 'worker started');
      return;
    }
    case 'reviewer': {
      const shutdown = newShutdown(config, logger);
      const db = openDb(config, logger, shutdown);
      await startReviewer(config, logger, shutdown, db);
      await startRoleOpsServer(config, logger, shutdown, db);
      startRoleHeartbeat(config, logger, shutdown, ['reviewer']);
      logger.info({ concurrency: config.roles.reviewer.concurrency }, 'reviewer started');
      return;
    }
    case 'skills':
    case 'reviews': {
      await runSkillCommand(command, argv.slice(1), config);
      return;
    }
    case 'scheduler': {
      const shutdown = newShutdown(config, logger);
      const db = openDb(config, logger, shutdown);
      await startScheduler(config, logger, shutdown, db);
      await startRoleOpsServer(config, logger, shutdown, db);
      startRoleHeartbeat(config, logger, shutdown, ['scheduler']);
      logger.info({ intervalMs: config.roles.reconcileIntervalMs }, 'scheduler started');
      return;
    }
    case 'memory':
    case 'prompt':
    case 'profile': {
      await runAdminCommand(command, argv.slice(1), config);
      return;
    }
    case 'tools': {
      await runToolsCommand(argv.slice(1), config);
      return;
    }
    case 'discord-commands': {
      if (!config.platforms.discord) throw new Error('DISCORD_BOT_TOKEN is not set');
      const count = await deployDiscordCommands(config.platforms.discord);
      process.stdout.write(`registered ${count} slash commands\n`);
      return;
    }
    case 'cron': {
      await runCronCommand(argv.slice(1), config);
      return;
    }
    case 'chat': {
      await runChat(config);
      return;
    }
    case 'search': {
      await runSearch(argv.slice(1), config);
      return;
    }
    case 'import': {
      await runImport(argv.slice(1), config);
      return;
    }
    case 'audit': {
      await runAudit(argv.slice(1), config);
      return;
    }
    case 'dead-letters': {
      process.exitCode = await runDeadLetters(argv.slice(1), config);
      return;
    }
    case 'runs': {
      process.exitCode = await runRuns(argv.slice(1), config);
      return;
    }
    case 'status': {
      process.exitCode = await runStatus(argv.slice(1), config);
      return;
    }
    case 'doctor': {
      process.exitCode = await runDoctor(config);
      return;
    }
    default:
      process.stderr.write(`herald: unknown command '${command}'\n\n${USAGE}`);
      process.exitCode = 2;
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`herald: invalid configuration: ${error.message.split('\n').join('\nherald: invalid configuration: ')}\n`);
  } else {
    process.stderr.write(`herald: ${(error as Error)?.message ?? String(error)}\n`);
  }
  process.exit(1);
});

