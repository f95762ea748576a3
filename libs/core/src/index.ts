export { loadConfig, ConfigError, PROVIDERS } from './config.ts';
export type { Config, DiscordConfig, ModelConfig, ProviderName, TelegramConfig } from './config.ts';
export type { SandboxConfig } from './sandbox-config.ts';
export type { CompressionConfig } from './compression-config.ts';
export { createLogger, silentLogger } from './logger.ts';
export type { Logger } from './logger.ts';
export { Shutdown, exitOnSignals } from './shutdown.ts';
export { backoffMs, sleep } from './backoff.ts';
