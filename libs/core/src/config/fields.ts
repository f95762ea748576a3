import { z } from 'zod';

/** The field kinds the config sections share, each with the one message an operator sees. */

export const integer = (min: number, max: number) =>
  z.coerce
    .number({ error: 'expected a number' })
    .int({ error: 'expected a whole number' })
    .min(min, { error: `expected at least ${min}` })
    .max(max, { error: `expected at most ${max}` });

export const url = (protocols: RegExp, hint: string) =>
  z.string().refine(
    (value) => {
      try {
        return protocols.test(new URL(value).protocol);
      } catch {
        return false;
      }
    },
    { error: `expected a URL like ${hint}` },
  );

/** Unset and blank mean the same: a variable left empty in a compose file is not set. */
export const optionalText = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === '' ? undefined : value.trim()));

/** A comma-separated list; blanks between commas are dropped. */
export const commaList = z
  .string()
  .optional()
  .transform((value) =>
    (value ?? '')
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== ''),
  );

/** One of a fixed set of words; the message lists them, so the list is written once. */
export const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: `expected ${values.length === 1 ? values[0] : `${values.slice(0, -1).join(', ')} or ${values.at(-1)}`}` });
