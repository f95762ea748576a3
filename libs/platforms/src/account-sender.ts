import { DEFAULT_ACCOUNT } from '@herald/core';
import { DeliveryError } from '@herald/delivery';
import type { DeliveryReceipt, OutboundDelivery, OutboundSender } from '@herald/delivery';

/**
 * One platform's sender over its accounts (docs/configuration.md#platform-accounts): a message
 * leaves through the bot its target names (`account`, set for a conversation on a named account
 * and by `<platform>@<account>:` targets), the default account's when it names none.
 */
export class AccountSender implements OutboundSender {
  readonly #platform: string;
  readonly #senders: ReadonlyMap<string, OutboundSender>;

  constructor(platform: string, senders: ReadonlyMap<string, OutboundSender>) {
    this.#platform = platform;
    this.#senders = senders;
  }

  #senderFor(target: Readonly<Record<string, string>>): OutboundSender {
    const account = target.account ?? DEFAULT_ACCOUNT;
    const sender = this.#senders.get(account);
    if (sender) return sender;
    // Retrying cannot make an account appear: the row fails and shows in GET /v1/deliveries.
    throw new DeliveryError(`no ${this.#platform} account '${account}' here (HERALD_PLATFORMS_FILE lists ${[...this.#senders.keys()].join(', ')})`, { retryable: false });
  }

  send(item: OutboundDelivery, signal: AbortSignal): Promise<DeliveryReceipt> {
    return this.#senderFor(item.target).send(item, signal);
  }

  async typing(target: Record<string, string>, signal: AbortSignal): Promise<void> {
    const sender = this.#senders.get(target.account ?? DEFAULT_ACCOUNT);
    await sender?.typing?.(target, signal);
  }
}
