import { describe, expect, it } from 'vitest';
import { modelSettingsSchema, profileNameSchema, unknownProvider } from '@herald/profiles';

describe('profile names and model settings', () => {
  it('takes lowercase letters, digits and dashes up to 40 characters, nothing else', () => {
    for (const name of ['ops', 'research-2', 'a', '9lives', 'a'.repeat(40)]) expect(profileNameSchema.safeParse(name).success, name).toBe(true);
    for (const name of ['', 'Ops', 'ops_x', '-ops', 'ops/x', 'ops x', 'a'.repeat(41), 'ünï']) expect(profileNameSchema.safeParse(name).success, name).toBe(false);
  });

  it('names the first reference to an undeclared provider by its field', () => {
    const known = new Set(['openai', 'anthropic', 'fast']);
    const settings = modelSettingsSchema.parse({ primary: 'fast/gpt', fallbacks: ['openai/gpt-4.1', 'slow/x'], summary: 'gone/y' });
    expect(unknownProvider(settings, known)).toMatchObject({ field: 'model.fallbacks[1]' });
    expect(unknownProvider(modelSettingsSchema.parse({ primary: 'fast/gpt', delegation: 'nope/z' }), known)).toMatchObject({ field: 'model.delegation' });
    expect(unknownProvider(modelSettingsSchema.parse({ primary: 'fast/gpt', summary: 'anthropic/claude' }), known)).toBeUndefined();
    expect(modelSettingsSchema.safeParse({ primary: 'no-slash' }).success).toBe(false);
    expect(modelSettingsSchema.safeParse({ primary: 'fast/gpt', extra: 1 }).success).toBe(false);
  });
});
