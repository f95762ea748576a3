/**
 * Splits Markdown into chunks of at most `limit` characters, preferring paragraph boundaries, then
 * line boundaries, then spaces. A code block is never cut without closing it: a block too long for
 * one chunk continues in the next under the same fence, so every chunk renders on its own.
 */
export function splitMarkdown(text: string, limit: number): string[] {
  if (limit < 16) throw new Error(`split limit ${limit} is too small`);
  const trimmed = text.trim();
  if (trimmed.length <= limit) return trimmed === '' ? [] : [trimmed];
  const chunks: string[] = [];
  let current = '';
  const flush = () => {
    if (current.trim() !== '') chunks.push(current.trim());
    current = '';
  };
  for (const block of blocksOf(trimmed)) {
    const pieces = block.length <= limit ? [block] : splitBlock(block, limit);
    for (const piece of pieces) {
      const joined = current === '' ? piece : `${current}\n\n${piece}`;
      if (joined.length <= limit) current = joined;
      else {
        flush();
        current = piece;
      }
    }
  }
  flush();
  return chunks;
}

const FENCE = /^(\s*)(`{3,}|~{3,})(.*)$/;

/** Paragraphs (separated by blank lines) and whole fenced code blocks. */
function blocksOf(text: string): string[] {
  const blocks: string[] = [];
  let lines: string[] = [];
  let fence: string | null = null;
  const push = () => {
    const block = lines.join('\n');
    if (block.trim() !== '') blocks.push(block);
    lines = [];
  };
  for (const line of text.split('\n')) {
    const match = FENCE.exec(line);
    if (fence === null) {
      if (match) {
        push();
        fence = match[2] ?? '```';
        lines.push(line);
      } else if (line.trim() === '') push();
      else lines.push(line);
    } else {
      lines.push(line);
      if (match && (match[2] ?? '').startsWith(fence) && (match[3] ?? '').trim() === '') {
        fence = null;
        push();
      }
    }
  }
  push();
  return blocks;
}

function splitBlock(block: string, limit: number): string[] {
  const lines = block.split('\n');
  const open = FENCE.exec(lines[0] ?? '');
  if (open) {
    const openLine = (lines[0] ?? '').trim();
    const closeLine = open[2] ?? '```';
    const last = lines[lines.length - 1] ?? '';
    const body = FENCE.test(last) && lines.length > 1 ? lines.slice(1, -1) : lines.slice(1);
    const room = limit - openLine.length - closeLine.length - 2;
    return packLines(body, room).map((inner) => `${openLine}\n${inner}\n${closeLine}`);
  }
  return packLines(lines, limit);
}

/** Packs lines into pieces of at most `limit`, cutting a too-long line at spaces or hard. */
function packLines(lines: string[], limit: number): string[] {
  const pieces: string[] = [];
  let current = '';
  for (const line of lines) {
    for (const part of line.length <= limit ? [line] : cutLine(line, limit)) {
      const joined = current === '' ? part : `${current}\n${part}`;
      if (joined.length <= limit && !(current === '' && part === '' && pieces.length > 0)) current = joined;
      else {
        if (current !== '') pieces.push(current);
        current = part;
      }
    }
  }
  if (current !== '') pieces.push(current);
  return pieces;
}

function cutLine(line: string, limit: number): string[] {
  const parts: string[] = [];
  let rest = line;
  while (rest.length > limit) {
    let cut = rest.lastIndexOf(' ', limit);
    if (cut < limit / 2) cut = limit;
    parts.push(rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).trimStart();
  }
  if (rest !== '') parts.push(rest);
  return parts;
}
