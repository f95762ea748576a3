import { CHAT_PLATFORMS, formatNamedChat, isChatPlatform, parseNamedChat, PLATFORM_FACTS, TargetSyntaxError } from '@herald/core';
import type { CronOrigin, CronTarget } from '@herald/db';

/** Platforms a report can be posted to; a chat on any other platform (the API, the CLI) cannot. */
export const DELIVERABLE_PLATFORMS = [...CHAT_PLATFORMS, 'webhook'] as const;

export class DeliverSpecError extends Error {
  override readonly name = 'DeliverSpecError';
}

export const DELIVER_HELP =
  "use 'origin' (the chat the job is created from), 'local' (keep the output, post nothing), " +
  `${CHAT_PLATFORMS.map((platform) => `'${PLATFORM_FACTS[platform].targetSyntax}'`).join(', ')} or 'webhook:<https url>', comma-separated`;

function originTarget(origin: CronOrigin | null | undefined, platform?: string): CronTarget {
  if (!origin) throw new DeliverSpecError(`there is no chat to deliver to as 'origin' here: ${DELIVER_HELP}`);
  if (platform !== undefined && origin.platform !== platform) {
    throw new DeliverSpecError(`this job is not created from a ${platform} chat: name one as ${platform}:<chat_id>`);
  }
  if (!isChatPlatform(origin.platform)) {
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

/** `<chat platform>:<chat_id>[:<thread_id>]`, read by the one parser of named chats. */
function chatTarget(item: string): CronTarget {
  try {
    return parseNamedChat(item);
  } catch (error) {
    if (error instanceof TargetSyntaxError) throw new DeliverSpecError(error.message);
    throw error;
  }
}

/** `telegram:...` or `telegram@<account>:...`: a chat named on a chat platform. */
function chatPlatformPrefix(lower: string): boolean {
  const end = lower.search(/[:@]/);
  return end > 0 && isChatPlatform(lower.slice(0, end));
}

function targetKey(target: CronTarget): string {
  return 'url' in target ? `webhook:${target.url}` : `${formatNamedChat(target)}:`;
}

/**
 * Turns Hermes' `deliver` (a comma-separated string or a list) into concrete targets; duplicates
 * collapse. Undefined means the default: the origin chat when it can receive reports, else none.
 */
export function parseDeliver(spec: string | readonly string[] | undefined, origin: CronOrigin | null | undefined): CronTarget[] {
  if (spec === undefined) {
    return origin && isChatPlatform(origin.platform) ? [originTarget(origin)] : [];
  }
  const items = (typeof spec === 'string' ? spec.split(',') : [...spec]).map((item) => item.trim()).filter((item) => item !== '');
  const targets = new Map<string, CronTarget>();
  for (const item of items) {
    const lower = item.toLowerCase();
    let target: CronTarget | undefined;
    if (lower === 'local' || lower === 'none') continue;
    if (lower === 'origin') target = originTarget(origin);
    else if (isChatPlatform(lower)) target = originTarget(origin, lower);
    else if (chatPlatformPrefix(lower)) target = chatTarget(item);
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
  return formatNamedChat(target);
}
