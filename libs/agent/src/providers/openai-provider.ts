import OpenAI from 'openai';
import type {
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import type { ChatMessage, CompletionRequest, CompletionResult, FinishReason, Provider, ToolCall } from '../types.ts';
import { malformed, toProviderError } from './error-mapping.ts';

export interface OpenAIProviderOptions {
  model: string;
  apiKey?: string | undefined;
  baseURL?: string | undefined;
  timeoutMs?: number | undefined;
  fetch?: typeof fetch;
}

function toWire(system: string, messages: ChatMessage[]): ChatCompletionMessageParam[] {
  const wire: ChatCompletionMessageParam[] = [{ role: 'system', content: system }];
  for (const message of messages) {
    if (message.role === 'tool') {
      wire.push({ role: 'tool', tool_call_id: message.tool_call_id, content: message.content });
    } else if (message.role === 'assistant' && message.tool_calls && message.tool_calls.length > 0) {
      wire.push({
        role: 'assistant',
        content: message.content === '' ? null : message.content,
        tool_calls: message.tool_calls.map((call) => ({
          id: call.id,
          type: 'function',
          function: { name: call.name, arguments: call.arguments },
        })),
      });
    } else {
      wire.push({ role: message.role, content: message.content });
    }
  }
  return wire;
}

const FINISH: Record<string, FinishReason> = {
  stop: 'stop',
  tool_calls: 'tool_calls',
  function_call: 'tool_calls',
  length: 'length',
  content_filter: 'content_filter',
};

/** OpenAI chat completions, and any server that speaks them (vLLM, Ollama, OpenRouter). */
export class OpenAIProvider implements Provider {
  readonly name = 'openai';
  readonly model: string;
  readonly #client: OpenAI;

  constructor(options: OpenAIProviderOptions) {
    this.model = options.model;
    this.#client = new OpenAI({
      apiKey: options.apiKey ?? 'unused',
      baseURL: options.baseURL,
      timeout: options.timeoutMs,
      // The tool loop retries with its own policy; two layers of retries multiply delays.
      maxRetries: 0,
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
  }

  async complete(request: CompletionRequest): Promise<CompletionResult> {
    const tools: ChatCompletionTool[] = request.tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    }));
    let response: OpenAI.Chat.Completions.ChatCompletion;
    try {
      response = await this.#client.chat.completions.create(
        {
          model: this.model,
          messages: toWire(request.system, request.messages),
          ...(tools.length > 0 ? { tools } : {}),
          // One key per session keeps a session's requests on the same cache shard.
          prompt_cache_key: request.sessionId,
        },
        { signal: request.signal },
      );
    } catch (error) {
      throw toProviderError(this.name, error);
    }
    const choice = Array.isArray(response?.choices) ? response.choices[0] : undefined;
    if (!choice || typeof choice.message !== 'object' || choice.message === null) {
      throw malformed(this.name, 'no choices[0].message');
    }
    const toolCalls: ToolCall[] = [];
    for (const call of choice.message.tool_calls ?? []) {
      if (call.type !== 'function') continue;
      if (typeof call.function?.name !== 'string') throw malformed(this.name, 'tool call without a function name');
      toolCalls.push({ id: call.id, name: call.function.name, arguments: call.function.arguments ?? '' });
    }
    const content = choice.message.content;
    if (content !== null && content !== undefined && typeof content !== 'string') {
      throw malformed(this.name, 'message content is not text');
    }
    const usage = response.usage;
    return {
      content: content ?? '',
      toolCalls,
      finishReason: FINISH[choice.finish_reason ?? ''] ?? 'other',
      model: response.model ?? this.model,
      usage: {
        inputTokens: usage?.prompt_tokens ?? 0,
        outputTokens: usage?.completion_tokens ?? 0,
        cachedInputTokens: usage?.prompt_tokens_details?.cached_tokens ?? 0,
        cacheWriteTokens: 0,
      },
    };
  }
}
