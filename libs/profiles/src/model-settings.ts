import { z } from 'zod';

// A profile's own models (docs/configuration.md#models-per-profile): references `provider/model`
// to providers declared by HERALD_PROVIDERS_FILE (or the implicit openai and anthropic). Only
// names are stored; the keys stay in the environment of the processes that call the models.

const modelRef = z
  .string()
  .trim()
  .min(3)
  .max(200)
  .regex(/^[^/\s]+\/\S+$/, { error: 'expected provider/model, e.g. openai/gpt-4.1-mini' });

export const modelSettingsSchema = z.strictObject({
  primary: modelRef,
  fallbacks: z.array(modelRef).max(10).optional(),
  summary: modelRef.optional(),
  delegation: modelRef.optional(),
  context_tokens: z.number().int().min(1024).max(10_000_000).optional(),
});

export type ModelSettings = z.infer<typeof modelSettingsSchema>;

/** The stored value read back: a hand-edited bad row counts as none (the deployment's models). */
export function storedModelSettings(stored: unknown): ModelSettings | null {
  if (stored === null || stored === undefined) return null;
  const parsed = modelSettingsSchema.safeParse(stored);
  return parsed.success ? parsed.data : null;
}

/** Every reference of the settings with the request field that holds it. */
export function modelRefs(settings: ModelSettings): { field: string; ref: string }[] {
  return [
    { field: 'model.primary', ref: settings.primary },
    ...(settings.fallbacks ?? []).map((ref, index) => ({ field: `model.fallbacks[${index}]`, ref })),
    ...(settings.summary === undefined ? [] : [{ field: 'model.summary', ref: settings.summary }]),
    ...(settings.delegation === undefined ? [] : [{ field: 'model.delegation', ref: settings.delegation }]),
  ];
}

/** The first reference naming a provider that is not declared, as the field and a message; else undefined. */
export function unknownProvider(settings: ModelSettings, known: ReadonlySet<string>): { field: string; message: string } | undefined {
  for (const { field, ref } of modelRefs(settings)) {
    const provider = ref.slice(0, ref.indexOf('/'));
    if (!known.has(provider)) {
      return { field, message: `${field}: ${ref} names the provider '${provider}', which is not declared (known: ${[...known].sort().join(', ')})` };
    }
  }
  return undefined;
}
