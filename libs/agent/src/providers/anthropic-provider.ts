import type Anthropic from '@anthropic-ai/sdk';
import type { ContentBlockParam, ImageBlockParam, Message, MessageCreateParamsNonStreaming, MessageParam, Tool as AnthropicTool } from '@anthropic-ai/sdk/resources/messages';
import type { ChatMessage, CompletionRequest, ImageInput, CompletionResult, FinishReason, Provider, ToolCall } from '../types.ts';
import { ProviderError } from '../provider-error.ts';
import { malformed, toProviderError } from './error-mapping.ts';

export interface AnthropicProviderOptions {
  model: string;
  apiKey?: string | undefined;
  baseURL?: string | undefined;
  timeoutMs?: number | undefined;
  maxTokens?: number | undefined;
  fetch?: typeof fetch;
}

const EPHEMERAL = { type: 'ephemeral' } as const;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseInput(raw: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function imageBlock(image: ImageInput): ImageBlockParam {
  return { type: 'image', source: { type: 'base64', media_type: image.mime as 'image/png', data: image.data } };
}

function blocksOf(message: ChatMessage): ContentBlockParam[] {
  if (message.role === 'tool') {
    if (!message.images?.length) return [{ type: 'tool_result', tool_use_id: message.tool_call_id, content: message.content }];
    // A tool_result may hold image blocks: the screenshot goes with its own call's result.
    const content = [{ type: 'text' as const, text: message.content }, ...message.images.map(imageBlock)];
    return [{ type: 'tool_result', tool_use_id: message.tool_call_id, content }];
  }
  const blocks: ContentBlockParam[] = [];
  if (message.content !== '') blocks.push({ type: 'text', text: message.content });
  if (message.role === 'user') {
    for (const image of message.images ?? []) blocks.push(imageBlock(image));
  }
  if (message.role === 'assistant') {
    for (const call of message.tool_calls ?? []) {
      blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: parseInput(call.arguments) });
    }
  }
  return blocks;
}

/**
 * Anthropic needs strict user/assistant alternation with tool results inside user turns: tool
 * messages become tool_result blocks and consecutive same-role messages merge.
 */
export function toAnthropicMessages(messages: ChatMessage[]): MessageParam[] {
  const wire: { role: 'user' | 'assistant'; content: ContentBlockParam[] }[] = [];
  for (const message of messages) {
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const blocks = blocksOf(message);
    if (blocks.length === 0) blocks.push({ type: 'text', text: '(empty)' });
    const last = wire[wire.length - 1];
    if (last && last.role === role) last.content.push(...blocks);
    else wire.push({ role, content: blocks });
  }
  // In a merged user turn the tool results must come first, right after the assistant's tool_use.
  for (const turn of wire) {
    if (turn.role !== 'user') continue;
    const results = turn.content.filter((block) => block.type === 'tool_result');
    if (results.length > 0 && results.length < turn.content.length) {
      turn.content = [...results, ...turn.content.filter((block) => block.type !== 'tool_result')];
    }
  }
  // The rolling breakpoint: the whole conversation so far becomes a cached prefix for the next call.
  const tail = wire[wire.length - 1]?.content;
  const lastBlock = tail?.[tail.length - 1];
  if (lastBlock && lastBlock.type !== 'thinking' && lastBlock.type !== 'redacted_thinking') {
    (lastBlock as { cache_control?: unknown }).cache_control = EPHEMERAL;
  }
  return wire;
}

const STOP: Record<string, FinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  tool_use: 'tool_calls',
  max_tokens: 'length',
  refusal: 'content_filter',
};

export class AnthropicProvider implements Provider {
  readonly name = 'anthropic';
  readonly model: string;
  readonly #options: AnthropicProviderOptions;
  #client: Promise<Anthropic> | undefined;
  readonly #maxTokens: number;

  constructor(options: AnthropicProviderOptions) {
    this.model = options.model;
    this.#maxTokens = options.maxTokens ?? 4096;
    this.#options = options;
  }

  /**
   * The SDK is imported on the first call: createProvider is reached by every process that might
   * call a model, and @anthropic-ai/sdk costs about 350 ms of CPU and 25 MB to load, which a
   * deployment on OpenAI never needs (docs/decisions/2026-12-02-lazy-adapters.md).
   */
  #sdk(): Promise<Anthropic> {
    const options = this.#options;
    this.#client ??= import('@anthropic-ai/sdk').then(
      ({ default: Sdk }) =>
        new Sdk({
          apiKey: options.apiKey ?? 'unused',
          baseURL: options.baseURL,
          // Always explicit: without a timeout the SDK derives one from max_tokens and refuses
          // non-streaming calls whose max_tokens might take over 10 minutes (about 21k tokens).
          timeout: options.timeoutMs ?? 10 * 60_000,
          maxRetries: 0,
          ...(options.fetch ? { fetch: options.fetch } : {}),
        }),
    );
    return this.#client;
  }

  /** One Messages call, streamed and assembled when the caller takes deltas. */
  async #send(body: MessageCreateParamsNonStreaming, request: CompletionRequest): Promise<Message> {
    const sdk = await this.#sdk();
    if (!request.onDelta) return sdk.messages.create(body, { signal: request.signal });
    const assembly = new EventAssembly();
    const stream = await sdk.messages.create({ ...body, stream: true }, { signal: request.signal });
    for await (const event of stream) {
      const text = assembly.add(event as unknown);
      if (text !== '') request.onDelta(text);
    }
    return assembly.message(this.name);
  }

  async complete(request: CompletionRequest): Promise<CompletionResult> {
    const tools: AnthropicTool[] = request.tools.map((tool, index) => ({
      name: tool.name,
      description: tool.description,
      input_schema: tool.parameters as AnthropicTool['input_schema'],
      ...(index === request.tools.length - 1 ? { cache_control: EPHEMERAL } : {}),
    }));
    const body: MessageCreateParamsNonStreaming = {
      model: this.model,
      max_tokens: this.#maxTokens,
      // The API rejects empty text blocks, so an empty system prompt is left out.
      ...(request.system !== '' ? { system: [{ type: 'text' as const, text: request.system, cache_control: EPHEMERAL }] } : {}),
      messages: toAnthropicMessages(request.messages),
      ...(tools.length > 0 ? { tools } : {}),
    };
    let response: Message;
    try {
      response = await this.#send(body, request);
    } catch (error) {
      if (request.signal?.aborted && !ProviderError.isInstance(error)) {
        throw new ProviderError(`${this.name}: call aborted`, { kind: 'aborted', cause: error });
      }
      throw toProviderError(this.name, error);
    }
    // A gateway or a compatible server may answer 200 with anything: check the shape by hand.
    if (!isRecord(response) || !Array.isArray(response.content)) throw malformed(this.name, 'no content array');
    if (!isRecord(response.usage) || typeof response.usage.input_tokens !== 'number') {
      throw malformed(this.name, 'no usage');
    }
    const text: string[] = [];
    const toolCalls: ToolCall[] = [];
    for (const block of response.content as unknown[]) {
      if (!isRecord(block) || typeof block['type'] !== 'string') throw malformed(this.name, 'content block without a type');
      if (block['type'] === 'text') {
        if (typeof block['text'] !== 'string') throw malformed(this.name, 'text block without text');
        text.push(block['text']);
      } else if (block['type'] === 'tool_use') {
        const { id, name, input } = block;
        if (typeof name !== 'string' || typeof id !== 'string') throw malformed(this.name, 'tool_use block');
        toolCalls.push({ id, name, arguments: JSON.stringify(input ?? {}) });
      }
    }
    const usage = response.usage;
    const cacheRead = usage?.cache_read_input_tokens ?? 0;
    const cacheWrite = usage?.cache_creation_input_tokens ?? 0;
    return {
      content: text.join(''),
      toolCalls,
      finishReason: STOP[response.stop_reason ?? ''] ?? 'other',
      model: response.model ?? this.model,
      usage: {
        inputTokens: (usage?.input_tokens ?? 0) + cacheRead + cacheWrite,
        outputTokens: usage?.output_tokens ?? 0,
        cachedInputTokens: cacheRead,
        cacheWriteTokens: cacheWrite,
      },
    };
  }
}

/**
 * Rebuilds a Message from its stream events: message_start carries the model and the input usage,
 * each content block is opened, grown by text or partial JSON and closed, message_delta carries the
 * stop reason and the output tokens. Without message_stop the stream was cut short (retried).
 */
class EventAssembly {
  #message: Record<string, unknown> | undefined;
  #stopped = false;
  readonly #blocks: Record<string, unknown>[] = [];
  readonly #json: string[] = [];

  /** Takes one event; returns the text it added. */
  add(event: unknown): string {
    if (!isRecord(event)) return '';
    switch (event['type']) {
      case 'message_start':
        if (isRecord(event['message'])) this.#message = { ...event['message'] };
        return '';
      case 'content_block_start':
        if (typeof event['index'] === 'number' && isRecord(event['content_block'])) this.#blocks[event['index']] = { ...event['content_block'] };
        return '';
      case 'content_block_delta':
        return this.#delta(event);
      case 'message_delta':
        this.#messageDelta(event);
        return '';
      case 'message_stop':
        this.#stopped = true;
        return '';
      default:
        return '';
    }
  }

  #delta(event: Record<string, unknown>): string {
    const index = event['index'];
    const delta = event['delta'];
    if (typeof index !== 'number' || !isRecord(delta)) return '';
    const block = this.#blocks[index];
    if (!block) return '';
    if (delta['type'] === 'text_delta' && typeof delta['text'] === 'string') {
      block['text'] = `${typeof block['text'] === 'string' ? block['text'] : ''}${delta['text']}`;
      return delta['text'];
    }
    if (delta['type'] === 'input_json_delta' && typeof delta['partial_json'] === 'string') {
      this.#json[index] = (this.#json[index] ?? '') + delta['partial_json'];
    }
    return '';
  }

  #messageDelta(event: Record<string, unknown>): void {
    if (!this.#message) return;
    const delta = isRecord(event['delta']) ? event['delta'] : {};
    if (typeof delta['stop_reason'] === 'string') this.#message['stop_reason'] = delta['stop_reason'];
    const usage = isRecord(event['usage']) ? event['usage'] : {};
    const started = isRecord(this.#message['usage']) ? this.#message['usage'] : {};
    this.#message['usage'] = { ...started, ...usage };
  }

  message(provider: string): Message {
    if (!this.#message || !this.#stopped) {
      throw new ProviderError(`${provider}: stream ended before the answer was complete`, { kind: 'connection' });
    }
    const content = this.#blocks.map((block, index) => {
      if (block['type'] !== 'tool_use') return block;
      const json = this.#json[index];
      try {
        return { ...block, input: json === undefined || json === '' ? {} : (JSON.parse(json) as unknown) };
      } catch {
        throw malformed(provider, 'tool_use input is not JSON');
      }
    });
    return { ...this.#message, content } as unknown as Message;
  }
}
