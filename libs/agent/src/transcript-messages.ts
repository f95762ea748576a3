import type { StoredMessage } from '@herald/transcript';
import type { ChatMessage } from './types.ts';

/** A stored transcript as the provider-neutral messages the tool loop sends. */
export function toChatMessages(transcript: StoredMessage[]): ChatMessage[] {
  return transcript.map((message): ChatMessage => {
    if (message.role === 'tool') {
      return { role: 'tool', content: message.content, tool_call_id: message.toolCallId ?? '', name: message.toolName };
    }
    if (message.role === 'assistant') {
      return message.toolCalls ? { role: 'assistant', content: message.content, tool_calls: message.toolCalls } : { role: 'assistant', content: message.content };
    }
    return { role: 'user', content: message.content };
  });
}
