/**
 * A session's messages: appending them, loading the transcript (whole, with its compression state,
 * or in keyset pages), and the per-worker cache that reads only what came after its last message.
 */
export { appendMessages, loadTranscript, loadTranscriptState } from './transcript.ts';
export { messageWeight, TranscriptCache } from './transcript-cache.ts';
export type { NewMessage, StoredMessage, TranscriptState } from './transcript.ts';
export { loadTranscriptPage } from './transcript-page.ts';
export type { PageAnchor, TranscriptPage } from './transcript-page.ts';
export { storableJson, messagesJson } from './transcript.ts';
export { importMessages, IMPORTED_MESSAGE_COLUMNS, settleImportedMessages } from './message-import.ts';
