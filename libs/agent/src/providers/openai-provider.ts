import OpenAI, {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
  OpenAIError,
} from 'openai';
import { ProviderError } from '../provider-error.ts';
import { kindForStatus, parseRetryAfterMs } from './error-mapping.ts';
import type {
  ChatMessage,
  CompletionRequest,
  CompletionResult,
  FinishReason,
  Provider,
  ToolCall,
  ToolDefinition,
} from '../types.ts';

type WireMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type WireTool = OpenAI.Chat.Completions.ChatCompletionTool;

export interface OpenAIProviderOptions {
  model: string;
  apiKey?: string;
  baseURL?: string;
  /** Per-request timeout until the response headers arrive (the SDK's `timeout`). */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** OpenAI Chat Completions (and compatible servers) through the official SDK, non-streaming. */
export class OpenAIProvider implements Provider {
  readonly name = 'openai';
  readonly model: string;
  readonly #client: OpenAI;

  constructor(options: OpenAIProviderOptions) {
    this.model = options.model;
    this.#client = new OpenAI({
      // The SDK reads OPENAI_API_KEY itself when no key is given, and throws if there is none.
      ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
      ...(options.baseURL !== undefined ? { baseURL: options.baseURL } : {}),
      ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
      ...(options.fetch !== undefined ? { fetch: options.fetch } : {}),
      // The agent loop owns retries (completeWithRetry), so the SDK must not retry underneath it.
      maxRetries: 0,
    });
  }

  async complete(request: CompletionRequest): Promise<CompletionResult> {
    const params: OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming = {
      model: this.model,
      messages: toOpenAIMessages(request.system, request.messages),
      prompt_cache_key: request.sessionId,
    };
    if (request.tools.length > 0) params.tools = request.tools.map(toOpenAITool);

    let response: unknown;
    try {
      response = await this.#client.chat.completions.create(params, { signal: request.signal });
    } catch (error) {
      throw toProviderError(error, request.signal);
    }
    return normalizeResponse(response, this.model);
  }
}

export function toOpenAIMessages(system: string, messages: ChatMessage[]): WireMessage[] {
  const out: WireMessage[] = [];
  if (system !== '') out.push({ role: 'system', content: system });
  for (const message of messages) {
    switch (message.role) {
      case 'user':
        out.push({ role: 'user', content: message.content });
        break;
      case 'assistant':
        if (message.tool_calls && message.tool_calls.length > 0) {
          out.push({
            role: 'assistant',
            // An assistant turn that only calls tools has no text; null is the canonical wire form.
            content: message.content === '' ? null : message.content,
            tool_calls: message.tool_calls.map((call) => ({
              id: call.id,
              type: 'function' as const,
              function: { name: call.name, arguments: call.arguments },
            })),
          });
        } else {
          out.push({ role: 'assistant', content: message.content });
        }
        break;
      case 'tool':
        out.push({ role: 'tool', tool_call_id: message.tool_call_id, content: message.content });
        break;
    }
  }
  return out;
}

function toOpenAITool(tool: ToolDefinition): WireTool {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  };
}

function mapFinishReason(reason: unknown): FinishReason {
  switch (reason) {
    case 'stop':
      return 'stop';
    case 'tool_calls':
    case 'function_call':
      return 'tool_calls';
    case 'length':
      return 'length';
    case 'content_filter':
      return 'content_filter';
    default:
      return 'other';
  }
}

function malformed(detail: string, response: unknown): ProviderError {
  return new ProviderError(`malformed response from openai: ${detail}`, { kind: 'malformed', cause: response });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function tokenCount(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
}

/** Validates the parsed body by hand: a gateway or a compatible server may answer 200 with anything. */
function normalizeResponse(response: unknown, fallbackModel: string): CompletionResult {
  if (!isRecord(response)) throw malformed('body is not a JSON object', response);
  const choices = response['choices'];
  if (!Array.isArray(choices) || choices.length === 0) throw malformed('no choices', response);
  const choice: unknown = choices[0];
  if (!isRecord(choice) || !isRecord(choice['message'])) throw malformed('choice has no message', response);
  const message = choice['message'];

  const content = message['content'];
  if (content !== null && content !== undefined && typeof content !== 'string') {
    throw malformed('message content is not a string', response);
  }

  const toolCalls: ToolCall[] = [];
  const rawCalls = message['tool_calls'];
  if (rawCalls !== null && rawCalls !== undefined) {
    if (!Array.isArray(rawCalls)) throw malformed('tool_calls is not an array', response);
    for (const call of rawCalls as unknown[]) {
      if (!isRecord(call)) throw malformed('tool call is not an object', response);
      // Only function tools are offered; custom tool calls (free-form input) are not ours to run.
      if (call['type'] !== undefined && call['type'] !== 'function') continue;
      const fn = call['function'];
      if (
        typeof call['id'] !== 'string' ||
        !isRecord(fn) ||
        typeof fn['name'] !== 'string' ||
        typeof fn['arguments'] !== 'string'
      ) {
        throw malformed('tool call lacks id, name or arguments', response);
      }
      // Arguments stay the raw text the model produced; the tool runner parses and validates them.
      toolCalls.push({ id: call['id'], name: fn['name'], arguments: fn['arguments'] });
    }
  }

  const usage = isRecord(response['usage']) ? response['usage'] : {};
  const details = isRecord(usage['prompt_tokens_details']) ? usage['prompt_tokens_details'] : {};
  return {
    content: content ?? '',
    toolCalls,
    finishReason: mapFinishReason(choice['finish_reason']),
    usage: {
      inputTokens: tokenCount(usage['prompt_tokens']),
      outputTokens: tokenCount(usage['completion_tokens']),
      cachedInputTokens: tokenCount(details['cached_tokens']),
      cacheWriteTokens: 0,
    },
    model: typeof response['model'] === 'string' ? response['model'] : fallbackModel,
  };
}

function toProviderError(error: unknown, signal: AbortSignal | undefined): ProviderError {
  if (ProviderError.isInstance(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (signal?.aborted || error instanceof APIUserAbortError || (error instanceof Error && error.name === 'AbortError')) {
    return new ProviderError('openai call aborted', { kind: 'aborted', cause: error });
  }
  // Subclass before superclass: a timeout is also an APIConnectionError.
  if (error instanceof APIConnectionTimeoutError || (error instanceof Error && error.name === 'TimeoutError')) {
    return new ProviderError(`openai call timed out: ${message}`, { kind: 'timeout', cause: error });
  }
  if (error instanceof APIConnectionError) {
    return new ProviderError(`openai connection failed: ${message}`, { kind: 'connection', cause: error });
  }
  if (error instanceof APIError && typeof error.status === 'number') {
    const retryAfterMs = parseRetryAfterMs(error.headers);
    return new ProviderError(`openai error ${message}`, {
      kind: kindForStatus(error.status, `${String(error.code ?? '')} ${message}`),
      status: error.status,
      cause: error,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    });
  }
  // A 200 whose JSON body does not parse.
  if (error instanceof SyntaxError) {
    return new ProviderError(`malformed response from openai: ${message}`, { kind: 'malformed', cause: error });
  }
  // The SDK's own non-HTTP errors (missing API key, bad options): configuration, not worth a retry.
  if (error instanceof OpenAIError) {
    return new ProviderError(`openai client error: ${message}`, { kind: 'bad_request', cause: error });
  }
  return new ProviderError(`openai call failed: ${message}`, { kind: 'connection', cause: error });
}
