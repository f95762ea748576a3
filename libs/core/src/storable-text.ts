/**
 * Characters Postgres cannot store in text or jsonb: NUL, and UTF-16 surrogates without their pair
 * (the driver would turn them into U+FFFD in text; a jsonb `\ud800` escape is refused outright). The
 * one definition: the API refuses them with a 400 naming the field, storage strips them from what a
 * model, a tool or a platform produced.
 */
// eslint-disable-next-line no-control-regex -- NUL is what this looks for
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

export function hasUnstorable(text: string): boolean {
  UNSTORABLE.lastIndex = 0;
  const found = UNSTORABLE.test(text);
  UNSTORABLE.lastIndex = 0;
  return found;
}

/** The text without NUL and unpaired surrogates. */
export function storable(text: string): string {
  return text.replace(UNSTORABLE, '');
}

/** A JSON-like value with every string (keys included) made storable; other values as they are. */
export function storableValue<T>(value: T): T {
  if (typeof value === 'string') return storable(value) as T;
  if (Array.isArray(value)) return value.map((item: unknown) => storableValue(item)) as T;
  if (typeof value === 'object' && value !== null && !(value instanceof Date) && !Buffer.isBuffer(value)) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [storable(key), storableValue(item)])) as T;
  }
  return value;
}

/**
 * Where the first string (or object key) holding an unstorable character is in a JSON-like value:
 * its path (`['skills', 0, 'files']`; `[]` for the value itself); undefined when there is none.
 */
export function findUnstorable(value: unknown, path: readonly (string | number)[] = []): (string | number)[] | undefined {
  if (typeof value === 'string') return hasUnstorable(value) ? [...path] : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  const entries: [string | number, unknown][] = Array.isArray(value) ? [...value.entries()] : Object.entries(value);
  for (const [key, item] of entries) {
    if (typeof key === 'string' && hasUnstorable(key)) return [...path];
    const found = findUnstorable(item, [...path, key]);
    if (found !== undefined) return found;
  }
  return undefined;
}
