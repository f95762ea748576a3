import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError, OpenAIError } from 'openai';
import { ProviderError } from '../provider-error.ts';
import { kindForStatus, parseRetryAfterMs } from './error-mapping.ts';
import type { ChatMessage, CompletionRequest, CompletionResult, FinishReason, ImageInput, Provider, ToolCall, ToolDefinition } from '../types.ts';

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

/** OpenAI Chat Completions (and compatible servers) through the official SDK, streamed when the caller takes deltas. */
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

    if (request.onDelta) return this.#stream(params, request.onDelta, request.signal);
    let response: unknown;
    try {
      response = await this.#client.chat.completions.create(params, { signal: request.signal });
    } catch (error) {
      throw toProviderError(error, request.signal);
    }
    return normalizeResponse(response, this.model);
  }

  /** The same call streamed (usage asked for in the last chunk), assembled into the non-streamed shape. */
  async #stream(params: OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming, onDelta: (text: string) => void, signal: AbortSignal | undefined): Promise<CompletionResult> {
    const assembly = new ChunkAssembly();
    try {
      const stream = await this.#client.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } }, { signal });
      for await (const chunk of stream) {
        const text = assembly.add(chunk as unknown);
        if (text !== '') onDelta(text);
      }
    } catch (error) {
      throw toProviderError(error, signal);
    }
    return normalizeResponse(assembly.response(), this.model);
  }
}

/**
 * Rebuilds a chat.completion body from its chunks: text appended, tool calls gathered by index with
 * their arguments joined, the finish reason and the usage of the last chunks. A stream that ends
 * without a finish reason was cut short and is reported as a broken connection (retried).
 */
class ChunkAssembly {
  #content = '';
  #model: unknown;
  #finish: unknown;
  #usage: unknown;
  readonly #calls: { id?: string; type?: string; function: { name: string; arguments: string } }[] = [];

  /** Takes one chunk; returns the text it added. */
  add(chunk: unknown): string {
    if (!isRecord(chunk)) throw malformed('stream chunk is not a JSON object', chunk);
    if (typeof chunk['model'] === 'string') this.#model = chunk['model'];
    if (isRecord(chunk['usage'])) this.#usage = chunk['usage'];
    const choice: unknown = Array.isArray(chunk['choices']) ? chunk['choices'][0] : undefined;
    if (!isRecord(choice)) return '';
    if (choice['finish_reason'] !== null && choice['finish_reason'] !== undefined) this.#finish = choice['finish_reason'];
    const delta = isRecord(choice['delta']) ? choice['delta'] : {};
    for (const call of Array.isArray(delta['tool_calls']) ? (delta['tool_calls'] as unknown[]) : []) this.#addCall(call);
    const text = typeof delta['content'] === 'string' ? delta['content'] : '';
    this.#content += text;
    return text;
  }

  #addCall(call: unknown): void {
    if (!isRecord(call) || typeof call['index'] !== 'number') throw malformed('stream tool call without an index', call);
    const slot = (this.#calls[call['index']] ??= { function: { name: '', arguments: '' } });
    if (typeof call['id'] === 'string') slot.id = call['id'];
    if (typeof call['type'] === 'string') slot.type = call['type'];
    const fn = isRecord(call['function']) ? call['function'] : {};
    if (typeof fn['name'] === 'string') slot.function.name += fn['name'];
    if (typeof fn['arguments'] === 'string') slot.function.arguments += fn['arguments'];
  }

  response(): unknown {
    if (this.#finish === undefined) {
      throw new ProviderError('openai stream ended before the answer was complete', { kind: 'connection' });
    }
    const calls = this.#calls.filter((call) => call !== undefined);
    return {
      model: this.#model,
      choices: [{ finish_reason: this.#finish, message: { content: this.#content, ...(calls.length > 0 ? { tool_calls: calls } : {}) } }],
      ...(this.#usage === undefined ? {} : { usage: this.#usage }),
    };
  }
}

/** A user message with images: its text, then each image as an image_url data URL. */
function openAIParts(text: string, images: ImageInput[]): OpenAI.Chat.Completions.ChatCompletionContentPart[] {
  return [...(text === '' ? [] : [{ type: 'text' as const, text }]), ...images.map((image) => ({ type: 'image_url' as const, image_url: { url: `data:${image.mime};base64,${image.data}` } }))];
}

/**
 * OpenAI tool messages hold text only, and must follow their assistant message together: the images
 * of a run of tool results (a screenshot) go after the run, in one user message naming each tool.
 */
function toolImagesMessage(run: Extract<ChatMessage, { role: 'tool' }>[]): WireMessage | undefined {
  const parts = run.flatMap((message) => (message.images?.length ? openAIParts(`[The image from ${message.name ?? 'a tool'}'s result above]`, message.images) : []));
  return parts.length === 0 ? undefined : { role: 'user', content: parts };
}

/** The tool messages that end at `index`, in order. */
function toolRunEndingAt(messages: ChatMessage[], index: number): Extract<ChatMessage, { role: 'tool' }>[] {
  const run: Extract<ChatMessage, { role: 'tool' }>[] = [];
  for (let i = index; i >= 0; i--) {
    const message = messages[i];
    if (message?.role !== 'tool') break;
    run.unshift(message);
  }
  return run;
}

export function toOpenAIMessages(system: string, messages: ChatMessage[]): WireMessage[] {
  const out: WireMessage[] = [];
  if (system !== '') out.push({ role: 'system', content: system });
  for (const [index, message] of messages.entries()) {
    switch (message.role) {
      case 'user':
        out.push({ role: 'user', content: message.images?.length ? openAIParts(message.content, message.images) : message.content });
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
        if (messages[index + 1]?.role !== 'tool') {
          const images = toolImagesMessage(toolRunEndingAt(messages, index));
          if (images) out.push(images);
        }
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
      if (typeof call['id'] !== 'string' || !isRecord(fn) || typeof fn['name'] !== 'string' || typeof fn['arguments'] !== 'string') {
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
