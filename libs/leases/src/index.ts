/**
 * Who holds what: a worker's fenced lease on a session and the open inbox it claims with it (claim,
 * renew, release, fenced writes, LeaseLostError), a replica's lease on a platform connection (one
 * poller or gateway per account), and the sessions left with open events and no live lease.
 */
export type { Inbox, NextInbox, PendingEvent } from './open-inbox.ts';
export { openInbox } from './open-inbox.ts';
export { claimLease, renewLease, releaseLease, fenced, LeaseLostError } from './leases.ts';
export type { Lease, LeasedSession } from './leases.ts';
export { findStrandedSessions } from './stranded.ts';
export type { StrandedSession } from './stranded.ts';
export { acquirePlatformLease, renewPlatformLease, releasePlatformLease } from './platform-leases.ts';
export { INBOX_LIMIT, inboxOf } from './open-inbox.ts';
export type { InboxEntry } from './open-inbox.ts';
