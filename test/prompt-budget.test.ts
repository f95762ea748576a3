import { describe, expect, it } from 'vitest';
import { FIXED_PROMPT_BUDGET, measureFixedPrompt } from '../bench/prompt-size.ts';

describe('the fixed prompt', () => {
  it('of a default chat session with every built-in tool and skill stays within 4,000 o200k_base tokens', async () => {
    const size = await measureFixedPrompt();
    expect(size.tools).toEqual(expect.arrayContaining(['web_search', 'process', 'terminal', 'delegate_task', 'session_search']));
    expect(size.systemTokens).toBeGreaterThan(300);
    expect(size.total).toBe(size.systemTokens + size.toolsTokens);
    expect(size.total).toBeLessThanOrEqual(FIXED_PROMPT_BUDGET);
  });
});
