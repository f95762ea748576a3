import {
  CHAT_PLATFORMS,
  DELIVERY_ONLY_FACTS,
  DELIVERY_ONLY_PLATFORMS,
  formatNamedChat,
  isChatPlatform,
  isDeliveryOnlyPlatform,
  parseNamedChat,
  PLATFORM_FACTS,
  splitPlatformAccount,
  TargetSyntaxError,
} from '@herald/core';
import type { DeliveryOnlyPlatform } from '@herald/core';
import type { CronOrigin, CronTarget } from '@herald/db';

/** Platforms a report can be posted to; a chat on any other platform (the API, the CLI) cannot. */
export const DELIVERABLE_PLATFORMS = [...CHAT_PLATFORMS, ...DELIVERY_ONLY_PLATFORMS, 'webhook'] as const;

export class DeliverSpecError extends Error {
  override readonly name = 'DeliverSpecError';
}

export const DELIVER_HELP =
  "use 'origin' (the chat the job is created from), 'local' (keep the output, post nothing), " +
  `${[...CHAT_PLATFORMS.map((platform) => PLATFORM_FACTS[platform].targetSyntax), ...DELIVERY_ONLY_PLATFORMS.map((platform) => DELIVERY_ONLY_FACTS[platform].targetSyntax)].map((syntax) => `'${syntax}'`).join(', ')} ` +
  "(a bot other than the default one as '<platform>@<account>:<chat_id>') or 'webhook:<https url>', comma-separated";

function originTarget(origin: CronOrigin | null | undefined, platform?: string): CronTarget {
  if (!origin) throw new DeliverSpecError(`there is no chat to deliver to as 'origin' here: ${DELIVER_HELP}`);
  if (platform !== undefined && origin.platform !== platform) {
    throw new DeliverSpecError(`this job is not created from a ${platform} chat: name one as ${platform}:<chat_id>`);
  }
  if (!isChatPlatform(origin.platform)) {
    throw new DeliverSpecError(`the ${origin.platform} chat this job is created from cannot receive reports: ${DELIVER_HELP}`);
  }
  // The chat is on the bot it was written to: a report to it leaves through that one.
  return { platform: origin.platform, chatId: origin.chatId, ...(origin.threadId ? { threadId: origin.threadId } : {}), ...(origin.account ? { account: origin.account } : {}) };
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

/** One address of a delivery-only platform (`email:<address>`), read by its registry entry. */
function addressTarget(platform: DeliveryOnlyPlatform, text: string): CronTarget {
  const check = DELIVERY_ONLY_FACTS[platform].readAddress(text.trim());
  if ('problem' in check) throw new DeliverSpecError(check.problem);
  return { platform, chatId: check.address };
}

/** The delivery-only platform an item names as its prefix (`email:`), if any. */
function deliveryOnlyPrefix(lower: string): DeliveryOnlyPlatform | undefined {
  const colon = lower.indexOf(':');
  const platform = colon > 0 ? lower.slice(0, colon) : '';
  return isDeliveryOnlyPlatform(platform) ? platform : undefined;
}

function chatPlatformPrefix(lower: string): boolean {
  const colon = lower.indexOf(':');
  return colon > 0 && isChatPlatform(splitPlatformAccount(lower.slice(0, colon)).platform);
}

function targetKey(target: CronTarget): string {
  return 'url' in target ? `webhook:${target.url}` : `${formatNamedChat({ platform: target.platform, account: target.account, chatId: target.chatId })}:${target.threadId ?? ''}`;
}

/**
 * Turns Hermes' `deliver` (a comma-separated string or a list) into concrete targets, one per chat
 * or address (each is its own outbox row, retried and failed on its own); duplicates collapse.
 * Undefined means the default: the origin chat when it can receive reports, else none.
 */
export function parseDeliver(spec: string | readonly string[] | undefined, origin: CronOrigin | null | undefined): CronTarget[] {
  if (spec === undefined) {
    return origin && isChatPlatform(origin.platform) ? [originTarget(origin)] : [];
  }
  const items = (typeof spec === 'string' ? spec.split(',') : [...spec]).map((item) => item.trim()).filter((item) => item !== '');
  const targets = new Map<string, CronTarget>();
  // `email:a@x.org,b@y.org`: an address after an address target is one more of that platform.
  let addressed: DeliveryOnlyPlatform | undefined;
  for (const item of items) {
    const lower = item.toLowerCase();
    let target: CronTarget | undefined;
    const prefix = deliveryOnlyPrefix(lower);
    if (prefix === undefined && addressed !== undefined && !lower.includes(':') && lower.includes('@')) {
      target = addressTarget(addressed, item);
      targets.set(targetKey(target), target);
      continue;
    }
    addressed = prefix;
    if (lower === 'local' || lower === 'none') continue;
    if (prefix !== undefined) target = addressTarget(prefix, item.slice(prefix.length + 1));
    else if (lower === 'origin') target = originTarget(origin);
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
