import type { MessageRole, StoredToolCall } from '@herald/db';

/** A transcript's message as appended, and as read back with its place in the session. */
export interface NewMessage {
  role: MessageRole;
  content: string;
  toolCalls?: StoredToolCall[] | undefined;
  toolCallId?: string | undefined;
  toolName?: string | undefined;
  /** Who wrote it (a user message's author); unset: the person the turn answers (herald_append_messages). */
  owner?: string | undefined;
}

export interface StoredMessage extends NewMessage {
  id: string;
  seq: number;
  turnId: string | null;
  createdAt: Date;
}
