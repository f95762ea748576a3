import Fastify from 'fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RunQueue } from '@herald/queue';
import { registerHealthRoutes } from './health-routes.ts';
import { registerMessageRoutes } from './message-routes.ts';
import { registerOpenAiCompatRoutes } from './openai-compat-routes.ts';
import type { MessageRouteDependencies } from './message-routes.ts';
import { registerSessionRecordRoutes } from './session-record-routes.ts';
import { registerProfileRoutes } from './profile-routes.ts';
import { registerProfileAdminRoutes } from './profile-admin-routes.ts';
import { registerBindingRoutes } from './binding-routes.ts';
import { registerMemoryRoutes } from './memory-routes.ts';
import { registerWaitRoutes } from './wait-routes.ts';
import { registerSkillRoutes } from './skill-routes.ts';
import { registerSkillTransferRoutes } from './skill-transfer-routes.ts';
import { registerReviewRoutes } from './review-routes.ts';
import { registerCronRoutes } from './cron-routes.ts';
import { registerSearchRoutes } from './search-routes.ts';
import { registerPeopleSuggestionRoutes } from './people-suggestion-routes.ts';
import { sendError } from './api-errors.ts';
import { installAuth } from './api-auth.ts';
import { registerDeliveryRoutes } from './delivery-routes.ts';
import { registerAttachmentRoutes } from './attachment-routes.ts';
import { registerAdminRoutes } from './admin-routes.ts';
import { registerDeadLetterRoutes } from './dead-letter-routes.ts';
import { registerSessionRoutes } from './session-routes.ts';
import { registerConsoleRoutes } from './console-routes.ts';
import { registerPlatformWebhooks } from './platform-routes.ts';
import { installInputHygiene } from './input-hygiene.ts';
import { installOpenApi, installResponseCheck } from './openapi-routes.ts';
import type { PlatformWebhook } from '@herald/platforms';
import { PLATFORM_EVENT_ROUTES, platformAccountNames } from '@herald/core';
import { registerAuditRoutes } from './audit-routes.ts';
import { registerHookRoutes } from './hook-routes.ts';
import { registerMcpRoutes } from './mcp-routes.ts';
import { registerHandoffRoutes } from './handoff-routes.ts';
import { registerRunRoutes } from './run-routes.ts';
import { installReadYourWrites } from './read-your-writes.ts';
import { ReadRouting } from '@herald/db';
import { registerPeopleRoutes } from './people-routes.ts';
import { registerSignInRoutes } from './signin-routes.ts';
import { registerUsageRoutes } from './usage-routes.ts';

/** What the ingress needs: what the message routes need, plus the admin view's queues and Telegram. */
export interface IngressOptions extends MessageRouteDependencies {
  /** The BullMQ queues the admin view shows; the run queue alone when not given. */
  adminQueues?: readonly RunQueue[] | undefined;
  /** The platforms' webhook and event routes (each checks its own secret or signature), served with the raw body. */
  platformWebhooks?: readonly PlatformWebhook[] | undefined;
  /** Check every JSON answer against its route's contract (tests): a mismatch is a 500. */
  checkResponses?: boolean | undefined;
  /** Where lag-tolerant reads go (DATABASE_READ_URL); every read on the primary when not given. */
  reads?: ReadRouting | undefined;
  /** The providers a profile's model may name (HERALD_PROVIDERS_FILE and the implicit two); those two when not given. */
  providerNames?: ReadonlySet<string> | undefined;
}

/** One error shape for what the routes did not answer themselves: 413, a bad body's 400, 503 for storage down, else 500. */
function errorHandler(app: FastifyInstance, logger: IngressOptions['logger']) {
  return (error: Error & { statusCode?: number; code?: string }, request: FastifyRequest, reply: FastifyReply) => {
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return sendError(reply, 413, 'payload_too_large', `body: larger than the ${app.initialConfig.bodyLimit} byte limit`, 'body');
    }
    if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
      const message = error.code === 'FST_ERR_CTP_INVALID_JSON' || error instanceof SyntaxError ? `body: not valid JSON (${error.message})` : error.message;
      return sendError(reply, error.statusCode, 'invalid_request', message, 'body');
    }
    logger.error({ err: error, url: request.url }, 'request failed');
    const unavailable = /ECONNREFUSED|Connection terminated|connect|timeout/i.test(error.message);
    return unavailable ? sendError(reply, 503, 'unavailable', 'storage is unavailable; retry shortly, nothing was accepted') : sendError(reply, 500, 'internal', 'internal error');
  };
}

/** Builds the HTTP server; the caller listens and closes it. */
export function createIngressServer(options: IngressOptions): FastifyInstance {
  const app = Fastify({
    // Room for the text limit in JSON escapes plus the other fields; larger bodies are 413 unread.
    // The text (6 bytes a character at worst, JSON-escaped) and one attachment's worth of base64.
    bodyLimit: options.config.limits.maxMessageChars * 6 + 64 * 1024 + Math.ceil((options.config.attachments.maxBytes * 4) / 3),
    logger: false,
    return503OnClosing: true,
  });
  app.setErrorHandler(errorHandler(app, options.logger));
  installAuth(app, {
    db: options.db,
    token: options.config.api.token,
    bootstrapTokenDisabled: options.config.people.bootstrapTokenDisabled,
    operators: options.config.people.operators,
    profiles: options.profiles,
  });
  installInputHygiene(app, PLATFORM_EVENT_ROUTES);
  installOpenApi(app, options.config.api.token);
  if (options.checkResponses) installResponseCheck(app);
  const reads = options.reads ?? new ReadRouting(options.db);
  installReadYourWrites(app, reads);
  registerHealthRoutes(app, options);
  registerMessageRoutes(app, options);
  registerOpenAiCompatRoutes(app, options);
  registerSessionRecordRoutes(app, options.db);
  registerProfileRoutes(app, options.db, options.profiles, options.providerNames);
  registerProfileAdminRoutes(app, options.db, options.profiles);
  registerBindingRoutes(app, options.db, options.profiles);
  registerMemoryRoutes(app, options.db);
  registerWaitRoutes(app, { db: options.db, queue: options.queue, logger: options.logger, operators: options.config.people.operators });
  registerSkillRoutes(app, options.db);
  registerSkillTransferRoutes(app, options.db);
  registerReviewRoutes(app, options.db);
  registerCronRoutes(app, options.db, {
    operators: options.config.people.operators,
    mailDomains: options.config.platforms.mailAllowedDomains,
    platformAccounts: platformAccountNames(options.config.platforms),
  });
  registerDeliveryRoutes(app, options.db);
  registerAttachmentRoutes(app, options.db);
  registerAdminRoutes(app, { config: options.config, db: options.db, notices: options.notices, queues: options.adminQueues ?? [options.queue] });
  registerPlatformWebhooks(app, options.platformWebhooks ?? [], options.logger);
  registerSearchRoutes(app, reads);
  registerPeopleSuggestionRoutes(app, options.db);
  registerSessionRoutes(app, reads);
  registerHandoffRoutes(app, options.db);
  registerRunRoutes(app, { db: options.db, queue: options.queue, notices: options.notices, queuePrefix: options.config.redis.queuePrefix, logger: options.logger });
  registerDeadLetterRoutes(app, options.db);
  registerUsageRoutes(app, options.db, options.config.usage.budgets);
  registerConsoleRoutes(app);
  registerAuditRoutes(app, options.db);
  registerHookRoutes(app, options.db, { signing: options.config.hooks.secret !== undefined, profiles: options.profiles });
  registerMcpRoutes(app, options.db, { allowedCommands: options.config.mcp.allowedCommands });
  registerPeopleRoutes(app, options.db, { tokensPerPerson: options.config.people.tokensPerPerson });
  registerSignInRoutes(app, { db: options.db, logger: options.logger, signIn: options.config.signIn, publicUrl: options.config.api.url });
  return app;
}
