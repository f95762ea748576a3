import type { Provider } from '../types.ts';
import { AnthropicProvider } from './anthropic-provider.ts';
import { OpenAIProvider } from './openai-provider.ts';

export { OpenAIProvider } from './openai-provider.ts';
export type { OpenAIProviderOptions } from './openai-provider.ts';
export { AnthropicProvider, toAnthropicMessages } from './anthropic-provider.ts';
export type { AnthropicProviderOptions } from './anthropic-provider.ts';

export interface ProviderSpec {
  provider: 'openai' | 'anthropic';
  model: string;
  apiKey?: string | undefined;
  baseURL?: string | undefined;
  timeoutMs?: number | undefined;
}

export function createProvider(spec: ProviderSpec): Provider {
  return spec.provider === 'anthropic' ? new AnthropicProvider(spec) : new OpenAIProvider(spec);
}
