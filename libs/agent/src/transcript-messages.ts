import type { StoredMessage } from '@herald/transcript';
import type { ChatMessage } from './types.ts';

// The transcript cache hands out the same stored messages turn after turn; converting each once
// keeps the converted messages the same objects too, so their token estimates are taken once.
const converted = new WeakMap<StoredMessage, ChatMessage>();

/** A stored transcript as the provider-neutral messages the tool loop sends. */
export function toChatMessages(transcript: StoredMessage[]): ChatMessage[] {
  return transcript.map((message): ChatMessage => {
    let chat = converted.get(message);
    if (chat === undefined) {
      chat = toChatMessage(message);
      converted.set(message, chat);
    }
    return chat;
  });
}

function toChatMessage(message: StoredMessage): ChatMessage {
  if (message.role === 'tool') {
    return { role: 'tool', content: message.content, tool_call_id: message.toolCallId ?? '', name: message.toolName };
  }
  if (message.role === 'assistant') {
    return message.toolCalls ? { role: 'assistant', content: message.content, tool_calls: message.toolCalls } : { role: 'assistant', content: message.content };
  }
  return { role: 'user', content: message.content };
}
