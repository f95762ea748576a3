import { DEFAULT_ACCOUNT } from '@herald/core';
import { DeliveryError } from '@herald/delivery';
import type { DeliveryReceipt, DraftCalls, OutboundDelivery, OutboundFile, OutboundSender } from '@herald/delivery';

/**
 * One platform's sender over its accounts (docs/configuration.md#platform-accounts): a message
 * leaves through the bot its target names (`account`, set for a conversation on a named account
 * and by `<platform>@<account>:` targets), the default account's when it names none. Files and
 * streamed drafts too, where the platform's senders have them (all of one platform's do or don't).
 */
export class AccountSender implements OutboundSender {
  readonly #platform: string;
  readonly #senders: ReadonlyMap<string, OutboundSender>;
  readonly drafts?: DraftCalls;
  readonly sendFile?: (item: OutboundDelivery, file: OutboundFile, signal: AbortSignal) => Promise<DeliveryReceipt>;

  constructor(platform: string, senders: ReadonlyMap<string, OutboundSender>) {
    this.#platform = platform;
    this.#senders = senders;
    const first = [...senders.values()][0];
    if (first?.sendFile) {
      this.sendFile = async (item, file, signal) => {
        const sender = this.#senderFor(item.target);
        if (sender.sendFile === undefined) throw new DeliveryError(`${this.#platform} account '${item.target.account ?? DEFAULT_ACCOUNT}' cannot send files`, { retryable: false });
        return sender.sendFile(item, file, signal);
      };
    }
    if (first?.drafts) this.drafts = this.#draftCalls(first.drafts.maxChars);
  }

  /** Each draft call goes to the account of its target, as the answer it becomes will. */
  #draftCalls(maxChars: number): DraftCalls {
    const calls = (target: Readonly<Record<string, string>>): DraftCalls => {
      const drafts = this.#senderFor(target).drafts;
      if (drafts === undefined) throw new DeliveryError(`${this.#platform} account '${target.account ?? DEFAULT_ACCOUNT}' has no drafts`, { retryable: false });
      return drafts;
    };
    return {
      maxChars,
      post: async (target, text, first, signal) => calls(target).post(target, text, first, signal),
      edit: async (target, messageId, text, signal) => calls(target).edit(target, messageId, text, signal),
      remove: async (target, messageId, signal) => calls(target).remove(target, messageId, signal),
    };
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
