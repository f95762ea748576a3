// Hermes stores a multimodal message (a list of parts: text, images, audio, files) as its JSON
// behind a prefix (hermes_state_messages.py _encode_content). Herald has no attachments yet, so the
// import keeps such a message as readable text: its text parts as written, and one line naming
// each other part, never the raw JSON with its escapes (and never an inline base64 image).

const JSON_PREFIX = 'json:';

interface Part {
  type?: unknown;
  text?: unknown;
  image_url?: unknown;
  input_audio?: unknown;
  file?: unknown;
}

function partText(part: unknown): string {
  if (typeof part === 'string') return part;
  if (part === null || typeof part !== 'object') return '';
  const p = part as Part;
  if (typeof p.text === 'string') return p.text;
  const type = typeof p.type === 'string' ? p.type : 'part';
  if (type === 'image_url' || p.image_url !== undefined) {
    const url = typeof p.image_url === 'string' ? p.image_url : (p.image_url as { url?: unknown } | undefined)?.url;
    return typeof url === 'string' && !url.startsWith('data:') ? `[image: ${url}]` : `[image${typeof url === 'string' ? `: ${url.slice(5, url.indexOf(';') > 0 ? url.indexOf(';') : 30)}` : ''}]`;
  }
  const name = (p.file as { filename?: unknown } | undefined)?.filename;
  return `[${type.replace(/_url$/, '')}${typeof name === 'string' ? `: ${name}` : ''}]`;
}

/** The content as Herald stores it, and whether it was multimodal. */
export function readableContent(content: string): { text: string; multimodal: boolean } {
  if (!content.startsWith(JSON_PREFIX)) return { text: content, multimodal: false };
  let parsed: unknown;
  try {
    parsed = JSON.parse(content.slice(JSON_PREFIX.length));
  } catch {
    return { text: content, multimodal: false };
  }
  if (typeof parsed === 'string') return { text: parsed, multimodal: false };
  const parts = Array.isArray(parsed) ? parsed : [parsed];
  return {
    text: parts
      .map(partText)
      .filter((line) => line !== '')
      .join('\n'),
    multimodal: true,
  };
}

/** The inverse for an export: readable text stays text (Hermes reads a string content as is). */
export { JSON_PREFIX as HERMES_CONTENT_JSON_PREFIX };
