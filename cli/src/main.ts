import { existsSync } from 'node:fs';
import { ConfigError, createLogger, exitOnSignals, loadConfig, Shutdown } from '@herald/core';
import type { Config, Logger } from '@herald/core';
import { startTracing, traceLogFields } from '@herald/telemetry';
import { COMMANDS, USAGE } from './commands.ts';
import type { Command } from './commands.ts';
import { enterRunMode } from './run-mode.ts';
import type { RunMode } from './run-mode.ts';
import { checkApiPort, checkServices } from './service-checks.ts';
import { SetupError } from './setup-error.ts';

let stopTracing: (() => Promise<void>) | null = null;

let runMode: RunMode | null = null;

/** The long-running role's shutdown once made: an error during its start runs it (pools, then the embedded Postgres). */
let roleShutdown: Shutdown | null = null;

function newShutdown(config: Config, logger: Logger): Shutdown {
  const shutdown = new Shutdown({ logger, deadlineMs: config.roles.shutdownTimeoutMs });
  // Registered first, so it runs last and flushes the spans of everything else's shutdown.
  if (stopTracing) shutdown.add('tracing', stopTracing);
  // Next to last: the embedded Postgres outlives every role that uses it.
  const mode = runMode;
  if (mode) shutdown.add('embedded postgres', () => mode.stop());
  exitOnSignals(shutdown, logger);
  roleShutdown = shutdown;
  return shutdown;
}

/** Stops whatever this process started: the role's shutdown when there is one, else the embedded Postgres. */
async function stopStarted(): Promise<void> {
  if (roleShutdown) await roleShutdown.shutdown();
  else await runMode?.stop();
}

/** Set once Ctrl-C (or SIGTERM) stops a command that has no role shutdown: its error, if any, is not news. */
let interrupted = false;

/**
 * Ctrl-C or SIGTERM before a role's own shutdown exists (a one-shot command, or a role still
 * migrating): stop the embedded Postgres this process started, then exit. The server runs in its
 * own process group, so nothing else stops it.
 */
function stopOnSignals(): void {
  const onSignal = (signal: NodeJS.Signals) => {
    // A role's shutdown, once made, handles signals itself (exitOnSignals).
    if (roleShutdown !== null || interrupted) return;
    interrupted = true;
    void stopStarted().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
}

/**
 * The settings `herald init` wrote: ./.env, under what the environment already sets (the
 * environment wins, as with node --env-file).
 */
function loadDotEnv(): void {
  if (existsSync('.env')) process.loadEnvFile('.env');
}

function wantsHelp(args: readonly string[]): boolean {
  const options = args.includes('--') ? args.slice(0, args.indexOf('--')) : args;
  return options.includes('--help') || options.includes('-h');
}

async function printHelp(name: string, command: Command): Promise<void> {
  const text = command.help ? await command.help() : `usage: herald ${name}\n\n${command.summary}`;
  process.stdout.write(`${text.trimEnd()}\n`);
}

async function main(argv: string[]): Promise<void> {
  const name = argv[0];
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    process.stdout.write(USAGE);
    return;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (command === undefined) {
    process.stderr.write(`herald: unknown command '${name}'\n\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  const args = argv.slice(1);
  if (wantsHelp(args)) return printHelp(name, command);
  loadDotEnv();
  const loaded = loadConfig();
  // Before the embedded Postgres starts: a port in use stops the start with nothing to undo.
  if (command.api === true) await checkApiPort(loaded);
  if (command.database === true) stopOnSignals();
  try {
    const config = await withRunMode(name, command, loaded);
    // Every process of this deployment stores attachment bytes in the same place (HERALD_BLOB_URL).
    if (config.attachments.blobStorage !== null) (await import('@herald/attachments')).useBlobStorage(config.attachments.blobStorage);
    if (command.database === true) await checkServices(config, { queue: command.longRunning === true });
    await runCommand(name, command, args, config);
  } catch (error) {
    await stopStarted();
    throw error;
  }
  // A long-running role stops the embedded Postgres in its shutdown; a one-shot command here.
  if (command.longRunning !== true) await stopStarted();
}

/** Log lines for a person (pino-pretty) at a terminal, JSON otherwise or with LOG_FORMAT=json. */
function prettyLogs(config: Config): boolean {
  const { logFormat } = config.observability;
  return logFormat === 'pretty' || (logFormat === 'auto' && process.stdout.isTTY === true);
}

/**
 * A one-shot command's own output is what the person asked for: its start-up (the embedded
 * Postgres) logs warnings only, unless LOG_LEVEL asks for more than info. Migrate reports as a role.
 */
function startLogLevel(name: string, command: Command, config: Config): string {
  const level = config.observability.logLevel;
  return command.longRunning === true || name === 'migrate' || level !== 'info' ? level : 'warn';
}

/** Settles the run mode (starting the embedded Postgres if it is the one) and says which runs. */
async function withRunMode(name: string, command: Command, config: Config): Promise<Config> {
  if (command.database !== true) return config;
  const pretty = prettyLogs(config);
  const logger = createLogger({ level: startLogLevel(name, command, config), service: `herald-${name}`, pretty });
  runMode = await enterRunMode(config, logger);
  if (command.longRunning === true) {
    // At a terminal `herald up` says it once, in its summary; elsewhere a log line, and a plain line.
    const fields = { database: runMode.config.database.mode, queue: runMode.config.redis.queueMode };
    if (name !== 'up' || !pretty) logger.info(fields, runMode.line);
    if (name === 'up' && !pretty) process.stderr.write(`${runMode.line}\n`);
  }
  return runMode.config;
}

async function runCommand(name: string, command: Command, args: string[], config: Config): Promise<void> {
  // Off (nothing loaded) unless OTEL_EXPORTER_OTLP_ENDPOINT is set.
  if (command.longRunning === true) stopTracing = await startTracing({ endpoint: config.observability.otlpEndpoint, serviceName: `herald-${name}` });
  const pretty = prettyLogs(config);
  const logger = createLogger({ level: config.observability.logLevel, service: `herald-${name}`, pretty, ...(stopTracing ? { mixin: traceLogFields } : {}) });
  process.on('uncaughtException', (error) => {
    // The process state is unknown after this; exit and let the supervisor restart us.
    logger.error({ err: error }, 'uncaught exception');
    process.exit(1);
  });
  const exitCode = await command.run(args, { config, logger, newShutdown: () => newShutdown(config, logger), pretty, modeLine: runMode?.line ?? null });
  if (typeof exitCode === 'number') process.exitCode = exitCode;
}

/** One line (or a usage block) per expected condition; a stack trace only for what nobody expected. */
function report(error: unknown): number {
  // A providers or prices file, or a model chain, that cannot be used is a configuration error too
  // (provider-wiring.ts, prices-wiring.ts).
  const name = (error as Error | undefined)?.name;
  if (error instanceof ConfigError || name === 'ProviderConfigError' || name === 'PriceConfigError') {
    process.stderr.write(`herald: invalid configuration: ${(error as Error).message.split('\n').join('\nherald: invalid configuration: ')}\n`);
    return 1;
  }
  if (error instanceof SetupError) {
    process.stderr.write(`herald: ${error.message}\n`);
    return error.exitCode;
  }
  process.stderr.write(`herald: ${(error as Error)?.message ?? String(error)}\n`);
  return 1;
}

main(process.argv.slice(2)).catch((error: unknown) => {
  // Interrupted: the signal handler stops what was started and exits; the error is its echo.
  if (interrupted) return;
  process.exit(report(error));
});
