const NAMED_ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  copy: '©',
  reg: '®',
  trade: '™',
  hellip: '…',
  mdash: '—',
  ndash: '–',
  lsquo: '‘',
  rsquo: '’',
  ldquo: '“',
  rdquo: '”',
  laquo: '«',
  raquo: '»',
  bull: '•',
  middot: '·',
  deg: '°',
  euro: '€',
  pound: '£',
  yen: '¥',
  cent: '¢',
  times: '×',
  divide: '÷',
  sect: '§',
  para: '¶',
  shy: '',
  zwj: '',
  zwnj: '',
  thinsp: ' ',
  ensp: ' ',
  emsp: ' ',
};

export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);?/gi, (match, entity: string) => {
    if (entity[0] === '#') {
      const code = entity[1] === 'x' || entity[1] === 'X' ? parseInt(entity.slice(2), 16) : parseInt(entity.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : match;
    }
    return NAMED_ENTITIES[entity.toLowerCase()] ?? match;
  });
}

/** Elements whose content is not part of the readable text. */
const DROPPED = ['script', 'style', 'noscript', 'template', 'svg', 'nav', 'iframe', 'canvas', 'object', 'head'];
const BLOCKS = /^(p|div|section|article|main|header|footer|aside|ul|ol|table|tr|pre|blockquote|form|fieldset|figure|figcaption|dl|dt|dd|address|hr|br|h[1-6]|li|td|th)$/;

export interface PageText {
  title: string | null;
  text: string;
}

/** Readable text of an HTML page: its title, headings, paragraphs, list items and link text. */
export function htmlToText(html: string): PageText {
  const titleMatch = /<title[^>]*>([\s\S]*?)<\/title\s*>/i.exec(html);
  const title = titleMatch ? decodeEntities(titleMatch[1]!).replace(/\s+/g, ' ').trim() || null : null;
  let body = html.replace(/<!--[\s\S]*?-->/g, ' ').replace(/<!\[CDATA\[[\s\S]*?\]\]>/g, ' ');
  for (const tag of DROPPED) {
    body = body.replace(new RegExp(`<${tag}\\b[^>]*>[\\s\\S]*?</${tag}\\s*>`, 'gi'), ' ');
    body = body.replace(new RegExp(`<${tag}\\b[^>]*/>`, 'gi'), ' ');
  }
  body = body.replace(/<\/?([a-zA-Z][a-zA-Z0-9-]*)\b[^>]*>/g, (_tag, name: string) => {
    const lower = name.toLowerCase();
    if (lower === 'li') return _tag.startsWith('</') ? '' : '\n- ';
    if (/^h[1-6]$/.test(lower) && !_tag.startsWith('</')) return `\n\n${'#'.repeat(Number(lower[1]))} `;
    if (lower === 'td' || lower === 'th') return ' | ';
    return BLOCKS.test(lower) ? '\n' : '';
  });
  body = body.replace(/<[^>]*>/g, '');
  const text = decodeEntities(body)
    .split('\n')
    .map((line) => line.replace(/[ \t\f\v\u00a0]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return { title, text };
}
