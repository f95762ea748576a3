import type { CronOrigin, CronTarget } from '@herald/db';

/** Platforms a report can be posted to; a chat on any other platform (the API, the CLI) cannot. */
export const DELIVERABLE_PLATFORMS = ['telegram', 'discord', 'webhook'] as const;

export class DeliverSpecError extends Error {
  override readonly name = 'DeliverSpecError';
}

export const DELIVER_HELP =
  "use 'origin' (the chat the job is created from), 'local' (keep the output, post nothing), " +
  "'telegram:<chat_id>[:<topic_id>]', 'discord:<channel_id>[:<thread_id>]' or 'webhook:<https url>', comma-separated";

function originTarget(origin: CronOrigin | null | undefined, platform?: string): CronTarget {
  if (!origin) throw new DeliverSpecError(`there is no chat to deliver to as 'origin' here: ${DELIVER_HELP}`);
  if (platform !== undefined && origin.platform !== platform) {
    throw new DeliverSpecError(`this job is not created from a ${platform} chat: name one as ${platform}:<chat_id>`);
  }
  if (origin.platform !== 'telegram' && origin.platform !== 'discord') {
    throw new DeliverSpecError(`the ${origin.platform} chat this job is created from cannot receive reports: ${DELIVER_HELP}`);
  }
  return { platform: origin.platform, chatId: origin.chatId, ...(origin.threadId ? { threadId: origin.threadId } : {}) };
}

function webhookTarget(raw: string): CronTarget {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new DeliverSpecError(`'${raw}' is not a URL: write webhook:https://example.com/hook`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new DeliverSpecError(`a webhook URL must be http or https, got ${url.protocol}`);
  }
  return { platform: 'webhook', url: url.toString() };
}

function chatTarget(platform: 'telegram' | 'discord', rest: string): CronTarget {
  const [chatId, threadId, extra] = rest.split(':');
  const valid = /^-?[A-Za-z0-9_@.-]{1,128}$/;
  if (!chatId || !valid.test(chatId) || (threadId !== undefined && !valid.test(threadId)) || extra !== undefined) {
    throw new DeliverSpecError(`cannot read '${platform}:${rest}': write ${platform}:<chat_id> or ${platform}:<chat_id>:<thread_id>`);
  }
  return { platform, chatId, ...(threadId ? { threadId } : {}) };
}

function targetKey(target: CronTarget): string {
  return 'url' in target ? `webhook:${target.url}` : `${target.platform}:${target.chatId}:${target.threadId ?? ''}`;
}

/**
 * Turns Hermes' `deliver` (a comma-separated string or a list) into concrete targets; duplicates
 * collapse. Undefined means the default: the origin chat when it can receive reports, else none.
 */
export function parseDeliver(spec: string | readonly string[] | undefined, origin: CronOrigin | null | undefined): CronTarget[] {
  if (spec === undefined) {
    return origin && (origin.platform === 'telegram' || origin.platform === 'discord') ? [originTarget(origin)] : [];
  }
  const items = (typeof spec === 'string' ? spec.split(',') : [...spec]).map((item) => item.trim()).filter((item) => item !== '');
  const targets = new Map<string, CronTarget>();
  for (const item of items) {
    const lower = item.toLowerCase();
    let target: CronTarget | undefined;
    if (lower === 'local' || lower === 'none') continue;
    if (lower === 'origin') target = originTarget(origin);
    else if (lower === 'telegram' || lower === 'discord') target = originTarget(origin, lower);
    else if (lower.startsWith('telegram:')) target = chatTarget('telegram', item.slice('telegram:'.length));
    else if (lower.startsWith('discord:')) target = chatTarget('discord', item.slice('discord:'.length));
    else if (lower.startsWith('webhook:')) target = webhookTarget(item.slice('webhook:'.length));
    else if (/^https?:\/\//i.test(item)) target = webhookTarget(item);
    else throw new DeliverSpecError(`unknown delivery target '${item}': ${DELIVER_HELP}`);
    targets.set(targetKey(target), target);
  }
  return [...targets.values()];
}

/** A target as people write it, for listings and receipts. */
export function describeTarget(target: CronTarget): string {
  if ('url' in target) return `webhook:${target.url}`;
  return `${target.platform}:${target.chatId}${target.threadId ? `:${target.threadId}` : ''}`;
}
