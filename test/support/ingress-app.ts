import { request } from 'node:http';
import { silentLogger } from '@herald/core';
import { createIngressServer, registeredRoutes } from '@herald/ingress';
import type { RegisteredRoute } from '@herald/ingress';
import { SlackIngress, slackWebhooks } from '@herald/platforms/slack';
import { TelegramIngress, telegramWebhook } from '@herald/platforms/telegram';
import { TurnDoneListener } from '@herald/queue';
import { replicaOf } from './stack.ts';
import type { Stack } from './stack.ts';

export interface WalkableIngress {
  url: string;
  /** Every route the server registered (its onRoute hook), with the guard it got. */
  routes: readonly RegisteredRoute[];
  close(): Promise<void>;
}

/**
 * A second ingress replica on the stack's database and queues, built here so the test can read the
 * route table the server recorded: the same createIngressServer the stack runs, the Telegram
 * webhook route included when the stack's config has a bot.
 */
export async function startWalkableIngress(stack: Stack): Promise<WalkableIngress> {
  const replica = replicaOf(stack);
  // The replica's notice bus (Redis or Postgres, as the stack runs) carries the turn-done notices too.
  const listener = new TurnDoneListener(replica.deps.notices, stack.config.redis.queuePrefix);
  await listener.start();
  const telegramConfig = stack.config.platforms.telegram;
  const telegram = telegramConfig ? [telegramWebhook(new TelegramIngress({ ...replica.deps, config: telegramConfig }), silentLogger)] : [];
  const slackConfig = stack.config.platforms.slack;
  const slack =
    slackConfig?.signingSecret === undefined
      ? []
      : slackWebhooks([{ ingress: new SlackIngress({ ...replica.deps, config: slackConfig, owner: 'walkable-ingress' }), signingSecret: slackConfig.signingSecret }]);
  const platformWebhooks = [...telegram, ...slack];
  const app = createIngressServer({
    config: stack.config,
    db: replica.deps.db,
    queue: replica.deps.queue,
    notices: replica.deps.notices,
    listener,
    logger: silentLogger,
    platformWebhooks,
    checkResponses: true,
  });
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    url: address,
    routes: registeredRoutes(app),
    async close() {
      await app.close();
      await replica.close();
    },
  };
}

export interface RawResponse {
  status: number;
  body: string;
}

/**
 * An HTTP request with the path sent exactly as given: no URL parser in between to fold `..`,
 * decode escapes or merge slashes, as an attacker's client would send it.
 */
export function rawRequest(base: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<RawResponse> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: hostname, port, method, path, headers: { ...(body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }), ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
