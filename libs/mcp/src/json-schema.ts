import { promptSafe } from '@herald/knowledge';

type Schema = Record<string, unknown>;

/**
 * Keywords both providers take in tool parameters. Everything else is dropped: `$schema`, `$id`,
 * `oneOf`/`allOf` (OpenAI refuses them at the top and Anthropic's strict mode in places), `format`
 * values they do not know, vendor extensions. `$ref` is inlined from the schema's own `$defs`.
 */
const KEPT = new Set([
  'type',
  'properties',
  'required',
  'items',
  'enum',
  'const',
  'description',
  'default',
  'anyOf',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'pattern',
  'minItems',
  'maxItems',
  'uniqueItems',
  'additionalProperties',
  'title',
]);

/** Deep enough for real schemas; a recursive `$ref` stops here as an open value. */
const MAX_DEPTH = 12;

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function resolveRef(ref: string, root: Schema): Schema | undefined {
  const match = /^#\/(\$defs|definitions)\/([^/]+)$/.exec(ref);
  if (!match) return undefined;
  const defs = root[match[1] as string];
  const found = isSchema(defs) ? defs[decodeURIComponent(match[2] as string)] : undefined;
  return isSchema(found) ? found : undefined;
}

function cleanNode(node: unknown, root: Schema, depth: number): Schema {
  if (!isSchema(node) || depth > MAX_DEPTH) return {};
  if (typeof node.$ref === 'string') {
    const target = resolveRef(node.$ref, root);
    return target ? cleanNode({ ...target, ...(typeof node.description === 'string' ? { description: node.description } : {}) }, root, depth + 1) : {};
  }
  const out: Schema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'oneOf' && Array.isArray(value)) out.anyOf = value.map((v) => cleanNode(v, root, depth + 1));
    if (!KEPT.has(key)) continue;
    if (key === 'properties' && isSchema(value)) {
      out.properties = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, cleanNode(sub, root, depth + 1)]));
    } else if (key === 'items') {
      out.items = Array.isArray(value) ? cleanNode(value[0], root, depth + 1) : cleanNode(value, root, depth + 1);
    } else if (key === 'anyOf' && Array.isArray(value)) {
      out.anyOf = value.map((v) => cleanNode(v, root, depth + 1));
    } else if (key === 'additionalProperties') {
      out.additionalProperties = typeof value === 'boolean' ? value : cleanNode(value, root, depth + 1);
    } else if (key === 'description' || key === 'title') {
      // Parameter descriptions reach the model as surely as the tool's own: scanned the same way.
      if (typeof value === 'string') out[key] = promptSafe(value.slice(0, 2000));
    } else if (key === 'required') {
      if (Array.isArray(value)) out.required = value.filter((v) => typeof v === 'string');
    } else {
      out[key] = value;
    }
  }
  return out;
}

/**
 * A server's input schema made acceptable to OpenAI and Anthropic alike: an object at the top
 * (both require it), only the keywords both understand, local references inlined, descriptions
 * scanned for injections. `required` names only properties that exist.
 */
export function cleanInputSchema(schema: unknown): Schema {
  const root = isSchema(schema) ? schema : {};
  const cleaned = cleanNode(root, root, 0);
  const properties = isSchema(cleaned.properties) ? cleaned.properties : {};
  const required = Array.isArray(cleaned.required) ? (cleaned.required as string[]).filter((name) => Object.hasOwn(properties, name)) : [];
  const { anyOf: _anyOf, enum: _enum, const: _const, items: _items, ...rest } = cleaned;
  const out: Schema = { ...rest, type: 'object', properties };
  if (required.length > 0) out.required = required;
  else delete out.required;
  return out;
}
