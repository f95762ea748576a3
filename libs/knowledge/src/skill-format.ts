// The SKILL.md format (agentskills.io / Hermes): YAML frontmatter between `---` lines, then a
// Markdown body. Only the frontmatter subset skills use is parsed (scalars, quoted strings, inline
// and block lists, nested maps, `|` and `>` blocks), so no YAML dependency is needed.

export const SKILL_NAME_PATTERN = /^[a-z0-9][a-z0-9._-]*$/;
export const SKILL_NAME_MAX = 64;
export const SKILL_DESCRIPTION_MAX = 1024;
export const SKILL_MD_MAX_CHARS = 100_000;
export const SKILL_FILE_MAX_BYTES = 1024 * 1024;
export const SKILL_SUPPORT_DIRS = ['references', 'templates', 'scripts', 'assets'] as const;
export const SKILL_MD = 'SKILL.md';

export interface SkillMeta {
  name: string;
  description: string;
  category: string | null;
  tags: string[];
  requiresToolsets: string[];
}

type Yaml = string | Yaml[] | { [key: string]: Yaml };

interface Line {
  indent: number;
  text: string;
  number: number;
}

function unquote(value: string): string {
  const v = value.trim();
  if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) {
    return v.slice(1, -1).replace(/\\(["\\nt])/g, (_m, c: string) => (c === 'n' ? '\n' : c === 't' ? '\t' : c));
  }
  if (v.length >= 2 && v.startsWith("'") && v.endsWith("'")) return v.slice(1, -1).replace(/''/g, "'");
  // A trailing comment, outside quotes.
  return v.replace(/\s+#.*$/, '');
}

function scalar(raw: string): Yaml {
  const v = raw.trim();
  if (v.startsWith('[') && v.endsWith(']')) {
    const inner = v.slice(1, -1).trim();
    return inner === '' ? [] : inner.split(',').map((item) => unquote(item));
  }
  return unquote(v);
}

class FrontmatterError extends Error {}

function parseBlock(lines: Line[], start: number, indent: number): { value: Yaml; next: number } {
  const first = lines[start];
  if (first === undefined || first.indent < indent) return { value: '', next: start };
  if (first.text.startsWith('- ') || first.text === '-') {
    const items: Yaml[] = [];
    let i = start;
    while (i < lines.length && lines[i]!.indent === first.indent && (lines[i]!.text.startsWith('- ') || lines[i]!.text === '-')) {
      items.push(scalar(lines[i]!.text.slice(1)));
      i++;
    }
    return { value: items, next: i };
  }
  const map: Record<string, Yaml> = {};
  let i = start;
  while (i < lines.length) {
    const line = lines[i]!;
    if (line.indent < first.indent) break;
    if (line.indent > first.indent) throw new FrontmatterError(`line ${line.number}: unexpected indentation`);
    const match = /^([A-Za-z0-9_.-]+)\s*:(.*)$/.exec(line.text);
    if (!match) throw new FrontmatterError(`line ${line.number}: expected "key: value"`);
    const key = match[1]!;
    const rest = match[2]!.trim();
    i++;
    if (rest === '|' || rest === '>' || rest === '|-' || rest === '>-') {
      const parts: string[] = [];
      while (i < lines.length && lines[i]!.indent > line.indent) {
        parts.push(lines[i]!.text);
        i++;
      }
      map[key] = rest.startsWith('|') ? parts.join('\n') : parts.join(' ');
    } else if (rest === '') {
      const nested = parseBlock(lines, i, line.indent + 1);
      map[key] = nested.value;
      i = nested.next;
    } else {
      map[key] = scalar(rest);
    }
  }
  return { value: map, next: i };
}

/** Splits SKILL.md into its frontmatter (parsed) and body; throws with a line number when invalid. */
export function parseFrontmatter(text: string): { data: Record<string, Yaml>; body: string } {
  const normalized = text.replace(/^\uFEFF/, '').replace(/\r\n/g, '\n');
  if (!normalized.startsWith('---\n')) throw new FrontmatterError('SKILL.md must start with YAML frontmatter: a line "---"');
  const end = normalized.indexOf('\n---', 4);
  if (end === -1) throw new FrontmatterError('the frontmatter is not closed by a line "---"');
  const afterClose = normalized.indexOf('\n', end + 4);
  const body = afterClose === -1 ? '' : normalized.slice(afterClose + 1);
  const lines: Line[] = [];
  normalized
    .slice(4, end)
    .split('\n')
    .forEach((raw, index) => {
      if (raw.trim() === '' || raw.trimStart().startsWith('#')) return;
      if (/^\t/.test(raw)) throw new FrontmatterError(`line ${index + 2}: tabs are not allowed for indentation`);
      lines.push({ indent: raw.length - raw.trimStart().length, text: raw.trim(), number: index + 2 });
    });
  if (lines.length === 0) return { data: {}, body };
  const parsed = parseBlock(lines, 0, 0);
  if (parsed.next < lines.length) throw new FrontmatterError(`line ${lines[parsed.next]!.number}: unexpected indentation`);
  if (Array.isArray(parsed.value) || typeof parsed.value === 'string') {
    throw new FrontmatterError('the frontmatter must be a map of keys');
  }
  return { data: parsed.value, body };
}

function stringList(value: Yaml | undefined, field: string): string[] {
  if (value === undefined || value === '') return [];
  if (typeof value === 'string') return value.split(',').map((v) => v.trim()).filter((v) => v !== '');
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return (value as string[]).filter((v) => v !== '');
  throw new FrontmatterError(`${field} must be a list of strings`);
}

/** Validates a name; returns the problem or undefined. */
export function skillNameError(name: string): string | undefined {
  if (name.length === 0) return 'the skill name is empty';
  if (name.length > SKILL_NAME_MAX) return `the skill name is ${name.length} characters; the limit is ${SKILL_NAME_MAX}`;
  if (!SKILL_NAME_PATTERN.test(name)) {
    return `the skill name '${name}' must be lowercase letters, digits, '.', '_' or '-', starting with a letter or digit`;
  }
  return undefined;
}

/**
 * Parses and validates a SKILL.md: required name and description (limits as Hermes), optional
 * category, tags and required toolsets (top level or under metadata.hermes), a non-empty body.
 */
export function parseSkillMd(text: string): { ok: true; meta: SkillMeta; body: string } | { ok: false; error: string } {
  if (text.length > SKILL_MD_MAX_CHARS) {
    return { ok: false, error: `SKILL.md is ${text.length} characters; the limit is ${SKILL_MD_MAX_CHARS}` };
  }
  try {
    const { data, body } = parseFrontmatter(text);
    const metadata = data.metadata;
    const hermesBlock = metadata !== undefined && typeof metadata === 'object' && !Array.isArray(metadata) ? metadata.hermes : undefined;
    const hermes = hermesBlock !== undefined && typeof hermesBlock === 'object' && !Array.isArray(hermesBlock) ? hermesBlock : {};
    const name = data.name;
    if (typeof name !== 'string' || name.trim() === '') return { ok: false, error: "the frontmatter needs 'name'" };
    const nameError = skillNameError(name.trim());
    if (nameError) return { ok: false, error: nameError };
    const description = data.description;
    if (typeof description !== 'string' || description.trim() === '') {
      return { ok: false, error: "the frontmatter needs 'description', one sentence on when to use the skill" };
    }
    if (description.length > SKILL_DESCRIPTION_MAX) {
      return { ok: false, error: `the description is ${description.length} characters; the limit is ${SKILL_DESCRIPTION_MAX}` };
    }
    const category = data.category ?? hermes.category;
    if (category !== undefined && typeof category !== 'string') return { ok: false, error: 'category must be a string' };
    if (category !== undefined && category !== '' && skillNameError(category) !== undefined) {
      return { ok: false, error: `the category '${category}' must be lowercase letters, digits, '.', '_' or '-'` };
    }
    const tags = stringList(data.tags ?? hermes.tags, 'tags');
    const requiresToolsets = stringList(data.requires_toolsets ?? hermes.requires_toolsets, 'requires_toolsets');
    if (body.trim() === '') return { ok: false, error: 'the body after the frontmatter is empty; write the procedure there' };
    return {
      ok: true,
      meta: {
        name: name.trim(),
        description: description.trim(),
        category: category === undefined || category === '' ? null : category,
        tags,
        requiresToolsets,
      },
      body,
    };
  } catch (error) {
    if (error instanceof FrontmatterError) return { ok: false, error: `invalid frontmatter: ${error.message}` };
    throw error;
  }
}

/** A supporting file's path must sit under one of the four folders, without escaping it. */
export function supportPathError(path: string): string | undefined {
  if (path === SKILL_MD) return undefined;
  if (path.length === 0 || path.length > 255) return 'file_path must be 1 to 255 characters';
  if (path.includes('\\') || path.includes('\0')) return `file_path '${path}' may not contain backslashes or NUL`;
  const parts = path.split('/');
  if (parts.some((part) => part === '' || part === '.' || part === '..')) {
    return `file_path '${path}' must be a relative path without '.', '..' or empty parts`;
  }
  if (!(SKILL_SUPPORT_DIRS as readonly string[]).includes(parts[0]!) || parts.length < 2) {
    return `file_path '${path}' must be under ${SKILL_SUPPORT_DIRS.map((d) => `${d}/`).join(', ')} (or be SKILL.md)`;
  }
  return undefined;
}
