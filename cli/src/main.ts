import { ConfigError, createLogger, exitOnSignals, loadConfig, Shutdown } from '@herald/core';
import type { Config, Logger } from '@herald/core';
import { startTracing, traceLogFields } from '@herald/telemetry';
import { COMMANDS, USAGE } from './commands.ts';
import type { Command } from './commands.ts';
import { enterRunMode } from './run-mode.ts';
import type { RunMode } from './run-mode.ts';

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
  const loaded = loadConfig();
  const config = await withRunMode(name, command, loaded);
  if (runMode === null) return runCommand(name, command, argv.slice(1), config);
  const mode: RunMode = runMode;
  try {
    await runCommand(name, command, argv.slice(1), config);
  } catch (error) {
    await mode.stop();
    throw error;
  }
  // A long-running role stops the embedded Postgres in its shutdown; a one-shot command here.
  if (command.longRunning !== true) await mode.stop();
}

/** Settles the run mode (starting the embedded Postgres if it is the one) and says which runs. */
async function withRunMode(name: string, command: Command, config: Config): Promise<Config> {
  if (command.database !== true) return config;
  const logger = createLogger({ level: config.observability.logLevel, service: `herald-${name}` });
  runMode = await enterRunMode(config, logger);
  if (command.longRunning === true) {
    logger.info({ database: runMode.config.database.mode, queue: runMode.config.redis.queueMode }, runMode.line);
    if (name === 'up') process.stderr.write(`${runMode.line}\n`);
  }
  return runMode.config;
}

async function runCommand(name: string, command: Command, args: string[], config: Config): Promise<void> {
  // Off (nothing loaded) unless OTEL_EXPORTER_OTLP_ENDPOINT is set.
  if (command.longRunning === true) stopTracing = await startTracing({ endpoint: config.observability.otlpEndpoint, serviceName: `herald-${name}` });
  const logger = createLogger({ level: config.observability.logLevel, service: `herald-${name}`, ...(stopTracing ? { mixin: traceLogFields } : {}) });
  process.on('uncaughtException', (error) => {
    // The process state is unknown after this; exit and let the supervisor restart us.
    logger.error({ err: error }, 'uncaught exception');
    process.exit(1);
  });
  const exitCode = await command.run(args, { config, logger, newShutdown: () => newShutdown(config, logger) });
  if (typeof exitCode === 'number') process.exitCode = exitCode;
}

main(process.argv.slice(2)).catch((error: unknown) => {
  // A providers file or a model chain that cannot be used is a configuration error too (provider-wiring.ts).
  if (error instanceof ConfigError || (error as Error | undefined)?.name === 'ProviderConfigError') {
    process.stderr.write(`herald: invalid configuration: ${(error as Error).message.split('\n').join('\nherald: invalid configuration: ')}\n`);
  } else {
    process.stderr.write(`herald: ${(error as Error)?.message ?? String(error)}\n`);
  }
  process.exit(1);
});
