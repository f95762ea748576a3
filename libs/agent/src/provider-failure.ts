import type { ChainModel, ProviderError } from './provider-error.ts';

/** `a`, `a and b`, `a, b and c`, each named once. */
function listed(items: readonly string[]): string {
  const unique = [...new Set(items)];
  return unique.length <= 1 ? (unique[0] ?? '') : `${unique.slice(0, -1).join(', ')} and ${unique.at(-1)}`;
}

/**
 * What the operator should look at, named as this deployment configured it: the key variables and
 * base-URL settings of the chain's providers (named ones from HERALD_PROVIDERS_FILE included), or
 * the implicit providers' variables when the error did not come through a chain.
 */
function hintFor(error: ProviderError, chain: readonly ChainModel[]): string {
  const keys = chain.length > 0 ? listed(chain.map((model) => model.setup.keys)) : 'OPENAI_API_KEY / ANTHROPIC_API_KEY';
  const urls = chain.length > 0 ? listed(chain.map((model) => model.setup.baseURL)) : 'OPENAI_BASE_URL / ANTHROPIC_BASE_URL';
  const models = chain.length > 0 ? `the model name ${listed(chain.map((model) => model.ref))}` : 'HERALD_MODEL';
  const hints: Record<string, string> = {
    rate_limit: 'The model provider is rate limiting requests; try again in a minute.',
    server: 'The model provider is having trouble; try again in a moment.',
    timeout: 'The model provider did not answer in time; try again, or raise HERALD_MODEL_TIMEOUT_MS.',
    connection: `Herald could not reach the model provider; check the network and ${urls}.`,
    malformed: 'The model provider sent an answer Herald could not read; try again.',
    auth: `The model provider refused the credentials; check ${keys}.`,
    bad_request: `The model provider rejected the request; check ${models}.`,
    context_overflow: "This conversation no longer fits the model's context window; send /compress or /new.",
    aborted: 'The request was cancelled.',
  };
  return hints[error.kind] ?? '';
}

/**
 * The one line a person gets when a turn's model call failed for good: what failed (every model of
 * the chain, when there was more than one) and what to check. It names settings and variables,
 * never a key.
 */
export function describeProviderFailure(error: ProviderError): string {
  const chain = error.chain ?? [];
  const status = error.status === undefined ? '' : `HTTP ${error.status}`;
  const what =
    chain.length > 1
      ? `every model of the chain failed (${chain.map((model) => model.ref).join(', ')}${status ? `; the last with ${status}` : ''})`
      : `the model call failed${status ? ` (${status})` : ''}`;
  return `Sorry, I could not answer: ${what}. ${hintFor(error, chain)}`.trim();
}
