/**
 * A session's lineage and compression: claiming a compression, committing a compaction as a child
 * session that continues the chat, the notice it leaves, and the chain of sessions behind a chat.
 */
export { answerCommand, childTitle, claimCompression, commitCompaction, recordCompressionUnchanged, sessionLineage, takeNotice } from './lineage.ts';
export type { CompactionCommit, CompressionNotice, LineageEntry } from './lineage.ts';
