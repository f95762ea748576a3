// The SKILL.md format (agentskills.io / Hermes): YAML frontmatter between `---` lines, then a
// Markdown body. The frontmatter is read by a real YAML parser (the `yaml` package): real skills
// use lists of maps, anchors and multi-line strings, and a broken quote must be an error with a
// line, never a half-read value.

import { parseDocument } from 'yaml';

export const SKILL_NAME_PATTERN = /^[a-z0-9][a-z0-9._-]*$/;
export const SKILL_NAME_MAX = 64;
export const SKILL_DESCRIPTION_MAX = 1024;
export const SKILL_MD_MAX_CHARS = 100_000;
export const SKILL_FILE_MAX_BYTES = 1024 * 1024;
export const SKILL_SUPPORT_DIRS = ['references', 'templates', 'scripts', 'assets'] as const;
export const SKILL_MD = 'SKILL.md';
/** A category is a folder path of skill-name parts (Hermes nests them: `mlops/inference`). */
export const SKILL_CATEGORY_PATTERN = /^[a-z0-9][a-z0-9._-]*(\/[a-z0-9][a-z0-9._-]*)*$/;

export interface SkillMeta {
  name: string;
  description: string;
  category: string | null;
  tags: string[];
  requiresToolsets: string[];
  /** Every frontmatter field as written (license, platforms, metadata, prerequisites, ...). */
  fields: Record<string, unknown>;
}

class FrontmatterError extends Error {}

/** Splits SKILL.md into its frontmatter (parsed) and body; throws with a line number when invalid. */
export function parseFrontmatter(text: string): { data: Record<string, unknown>; body: string } {
  const normalized = text.replace(/^\uFEFF/, '').replace(/\r\n/g, '\n');
  if (!normalized.startsWith('---\n')) throw new FrontmatterError('SKILL.md must start with YAML frontmatter: a line "---"');
  const end = normalized.search(/\n---[ \t]*(\n|$)/);
  if (end === -1) throw new FrontmatterError('the frontmatter is not closed by a line "---"');
  const afterClose = normalized.indexOf('\n', end + 4);
  const body = afterClose === -1 ? '' : normalized.slice(afterClose + 1);
  const document = parseDocument(normalized.slice(4, end + 1), { uniqueKeys: true });
  const problem = document.errors[0];
  if (problem !== undefined) {
    // The frontmatter starts on line 2 of the file.
    const line = (problem.linePos?.[0]?.line ?? 0) + 1;
    throw new FrontmatterError(`line ${line}: ${problem.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`);
  }
  const data: unknown = document.toJS({ maxAliasCount: 100 });
  if (data === null || data === undefined) return { data: {}, body };
  if (typeof data !== 'object' || Array.isArray(data)) throw new FrontmatterError('the frontmatter must be a map of keys');
  return { data: data as Record<string, unknown>, body };
}

function asMap(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function stringList(value: unknown, field: string): string[] {
  if (value === undefined || value === null || value === '') return [];
  if (typeof value === 'string')
    return value
      .split(',')
      .map((v) => v.trim())
      .filter((v) => v !== '');
  if (Array.isArray(value) && value.every((v) => typeof v === 'string' || typeof v === 'number')) return value.map(String).filter((v) => v !== '');
  throw new FrontmatterError(`${field} must be a list of strings`);
}

/** Validates a category (a folder path such as `devops` or `mlops/inference`); returns the problem or undefined. */
export function categoryError(category: string): string | undefined {
  if (category.length > 200 || !SKILL_CATEGORY_PATTERN.test(category)) {
    return `the category '${category}' must be lowercase letters, digits, '.', '_' or '-' (nested with '/')`;
  }
  return undefined;
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
    const hermes = asMap(asMap(data.metadata).hermes);
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
    if (category !== undefined && category !== '' && categoryError(category) !== undefined) return { ok: false, error: categoryError(category)! };
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
        fields: data,
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
