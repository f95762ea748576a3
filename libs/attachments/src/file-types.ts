import { extname } from 'node:path';
import { fileTypeFromBuffer, supportedExtensions } from 'file-type';
import type { AttachmentKind } from '@herald/db';
import { AttachmentRefusedError } from './attachment-errors.ts';

/** Images a model may be shown; any other image type (SVG among them) is a file like any other. */
export const MODEL_IMAGE_TYPES: ReadonlySet<string> = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/**
 * Text formats have no magic number: a body with no NUL byte that decodes as UTF-8 is text, and its
 * extension only picks which text it is. HTML and SVG are text files here, never rendered.
 */
const TEXT_TYPES: Readonly<Record<string, string>> = {
  txt: 'text/plain',
  log: 'text/plain',
  md: 'text/markdown',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  json: 'application/json',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  xml: 'application/xml',
  html: 'text/html',
  htm: 'text/html',
  svg: 'image/svg+xml',
  js: 'text/javascript',
  ts: 'text/plain',
  py: 'text/x-python',
  sh: 'text/x-shellscript',
  sql: 'text/plain',
  ini: 'text/plain',
  toml: 'text/plain',
  conf: 'text/plain',
};

/** Extensions that name the same format file-type reports under another one. */
const SAME_FORMAT: Readonly<Record<string, string>> = { jpeg: 'jpg', jpe: 'jpg', oga: 'ogg', opus: 'ogg', tif: 'tiff', m4a: 'm4a', mp4a: 'm4a' };
const canonical = (ext: string) => SAME_FORMAT[ext] ?? ext;

export interface SniffedType {
  mime: string;
  kind: AttachmentKind;
  /** The format's usual extension, for a file that came without a name of its own. */
  ext: string;
}

export function kindOf(mime: string): AttachmentKind {
  if (MODEL_IMAGE_TYPES.has(mime)) return 'image';
  if (mime.startsWith('audio/') || mime === 'video/ogg' || mime === 'application/ogg') return 'audio';
  return 'document';
}

function isText(bytes: Buffer): boolean {
  if (bytes.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/**
 * The type of a file from its bytes (magic numbers, through file-type), never from its name or a
 * sender's header. A name whose extension names another format than the bytes (a PDF called
 * photo.png, a program called notes.txt) is refused: someone is being fooled, and it is not us.
 */
export async function sniffType(bytes: Buffer, name: string): Promise<SniffedType> {
  const ext = extname(name).slice(1).toLowerCase();
  const found = await fileTypeFromBuffer(bytes);
  if (found !== undefined) {
    const claimed = ext !== '' && (supportedExtensions.has(ext as never) || ext in TEXT_TYPES || ext in SAME_FORMAT);
    if (claimed && canonical(ext) !== canonical(found.ext)) throw lying(name, found.ext);
    // Parameters (audio/ogg; codecs=opus) are dropped: a type is compared and stored bare.
    const mime = found.mime.split(';')[0]!.trim();
    return { mime, kind: kindOf(mime), ext: found.ext };
  }
  if (isText(bytes)) {
    if (ext !== '' && supportedExtensions.has(ext as never) && !(ext in TEXT_TYPES)) throw lying(name, 'text');
    const mime = TEXT_TYPES[ext] ?? 'text/plain';
    return { mime, kind: 'document', ext: ext in TEXT_TYPES ? ext : 'txt' };
  }
  if (ext !== '' && (supportedExtensions.has(ext as never) || ext in TEXT_TYPES)) throw lying(name, 'of an unknown binary format');
  return { mime: 'application/octet-stream', kind: 'document', ext: 'bin' };
}

function lying(name: string, actual: string): AttachmentRefusedError {
  return new AttachmentRefusedError(`${name} is not what its name says: its bytes are ${actual === 'text' || actual.startsWith('of ') ? actual : `a ${actual} file`}`);
}
