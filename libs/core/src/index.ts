export { assertSafeBind, loadConfig, ConfigError, reconfigured, SETTING_NAMES } from './config.ts';
export { isLoopbackHost } from './config/api.ts';
export { AUDIT_MIN_RETENTION_DAYS } from './config/hooks.ts';
export { redactSecrets } from './redact.ts';
export type { Config } from './config.ts';
export { PROVIDERS } from './config/model.ts';
export type { ModelConfig, ModelEndpoint, ProviderName } from './config/model.ts';
// PlatformsConfig, every platform's settings type and the account helpers, which the adapters read
// (the registry names the platforms; naming them here would be one more place to keep).
export * from './config/platforms.ts';
export type { SandboxConfig } from './config/sandbox.ts';
export type { ToolsConfig } from './config/tools.ts';
export type { McpConfig } from './config/mcp.ts';
export type { OidcConfig, OidcRoleRule, SignInConfig } from './config/sign-in.ts';
export type { AttachmentsConfig } from './config/attachments.ts';
export { blobLocation, DEFAULT_ATTACHMENTS } from './config/attachments.ts';
export { parseBlobUrl } from './config/blob-url.ts';
export type { S3BlobLocation } from './config/blob-url.ts';
export type { WebSearchConfig } from './config/web-search.ts';
export type { ProcessesConfig } from './config/processes.ts';
export type { ReviewerRoleConfig, RolesConfig, SchedulerRoleConfig, WorkerRoleConfig } from './config/roles.ts';
export type { PeopleConfig, QuotaConfig } from './config/people.ts';
export type { CompressionConfig } from './config/compression.ts';
export { resetRuleFor, resetRuleSchema, resetRulesSchema } from './config/session-reset.ts';
export type { ResetRule, SessionResetConfig } from './config/session-reset.ts';
export type { DelegationConfig } from './config/delegation.ts';
export { createLogger, silentLogger } from './logger.ts';
export type { Logger } from './logger.ts';
export { Shutdown, exitOnSignals } from './shutdown.ts';
export { backoffMs, sleep } from './backoff.ts';
export { linkSignals } from './linked-signal.ts';
export type { LinkedSignal } from './linked-signal.ts';
export { apiUserId, parseUserId, qualifyUserId } from './user-id.ts';
export {
  API_PLATFORM,
  CHAT_PLATFORMS,
  CHAT_TARGET_SYNTAXES,
  DEFAULT_ACCOUNT,
  DELIVERY_ONLY_FACTS,
  DELIVERY_ONLY_PLATFORMS,
  isChatPlatform,
  isDeliveryOnlyPlatform,
  PERSON_PLATFORMS,
  PLATFORM_DEAD_LETTER_KINDS,
  PLATFORM_EVENT_ROUTES,
  PLATFORM_FACTS,
  SIGN_IN_PLATFORM,
} from './platform-registry.ts';
export type { ChatPlatform, DeliveryOnlyFacts, DeliveryOnlyPlatform, PlatformDeadLetterKind, PlatformFacts, SetupToken } from './platform-registry.ts';
export { checkMailAddress, mailDomainAllowed, mailDomainOf } from './mail-address.ts';
export type { MailAddressCheck } from './mail-address.ts';
export { ACCOUNT_NAME, formatNamedChat, parseNamedChat, readStoredTarget, splitPlatformAccount, storedTarget, TargetSyntaxError } from './delivery-target.ts';
export type { ChatAddress, DeliveryTarget, NamedChat } from './delivery-target.ts';
export type { PersonId, PersonPlatform } from './user-id.ts';
export { findUnstorable, hasUnstorable, storable, storableValue } from './storable-text.ts';
export { isUuid, UUID_PATTERN, uuidSchema } from './ids.ts';
export { declaredProviderNames, loadProviders, modelChain, ProviderConfigError } from './providers-file.ts';
export type { ChainEntry, NamedProvider } from './providers-file.ts';
export type { BudgetDefaults, UsageConfig } from './config/usage.ts';
export { loadPrices, PriceConfigError, PriceTable } from './prices-file.ts';
export type { CallCost, CallTokens, ModelPrice } from './prices-file.ts';
export type { ImageInput } from './model-image.ts';
