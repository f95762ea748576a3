// A message's files in a transcript or the chat. A picture is fetched with the console's own
// sign-in and drawn from a blob: URL the page made (CONSOLE_CSP allows img-src blob: and nothing
// wider); every other file is a button that fetches it the same way and saves it. Only the four
// raster types a browser decodes without running anything are drawn: SVG and HTML are files here,
// saved, never rendered (the server types them application/octet-stream too).
import { fetchFile, segment } from './api.ts';
import { h, notice } from './dom.ts';
import type { MessageAttachment } from '../../src/contracts/session-views.ts';

const DRAWN: ReadonlySet<string> = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/** How long a saved file's blob: URL lives: long enough for the browser to start the download. */
const SAVE_URL_MS = 60_000;

function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function filePath(sessionId: string, file: MessageAttachment): string {
  return `/v1/sessions/${segment(sessionId)}/attachments/${segment(file.sha256)}`;
}

function isDrawn(file: MessageAttachment): boolean {
  return file.kind === 'image' && DRAWN.has(file.mime);
}

/** A picture: its bytes fetched, then shown from a blob: URL, released once the image is decoded. */
function picture(sessionId: string, file: MessageAttachment): HTMLElement {
  const image = h('img', { class: 'attachment-image' });
  image.alt = file.name;
  const figure = h('figure', { class: 'attachment picture', 'data-attachment': file.sha256 }, image, h('figcaption', {}, `${file.name} · ${sizeText(file.size)}`));
  void fetchFile(filePath(sessionId, file))
    .then((blob) => {
      // Typed as the sniffed raster type whatever the response said, so nothing else is drawn.
      const url = URL.createObjectURL(new Blob([blob], { type: file.mime }));
      image.addEventListener('load', () => URL.revokeObjectURL(url), { once: true });
      image.src = url;
    })
    .catch((error: unknown) => figure.append(notice(`${file.name} could not be shown: ${(error as Error).message}`, 'error')));
  return figure;
}

/**
 * Saves a file: fetched with the sign-in, handed to the browser as application/octet-stream from a
 * blob: URL through a link made here (dom.ts allows only the console's own links), so it is saved
 * under its name and never opened.
 */
async function save(sessionId: string, file: MessageAttachment, button: HTMLButtonElement): Promise<void> {
  button.disabled = true;
  try {
    const blob = await fetchFile(filePath(sessionId, file));
    const url = URL.createObjectURL(new Blob([blob], { type: 'application/octet-stream' }));
    const link = document.createElement('a');
    link.href = url;
    link.download = file.name;
    link.rel = 'noopener';
    link.hidden = true;
    document.body.append(link);
    link.click();
    link.remove();
    window.setTimeout(() => URL.revokeObjectURL(url), SAVE_URL_MS);
  } catch (error) {
    button.after(notice(`${file.name} could not be saved: ${(error as Error).message}`, 'error'));
  } finally {
    button.disabled = false;
  }
}

function download(sessionId: string, file: MessageAttachment): HTMLElement {
  const button = h('button', { type: 'button', class: 'attachment-save' }, `Download ${file.name}`);
  button.addEventListener('click', () => void save(sessionId, file, button));
  return h('div', { class: 'attachment file', 'data-attachment': file.sha256 }, button, h('span', { class: 'muted' }, ` ${file.mime} · ${sizeText(file.size)}`));
}

/** The files a message carried, pictures drawn and the rest offered for download; null without any. */
export function attachmentList(sessionId: string, files: readonly MessageAttachment[] | undefined): HTMLElement | null {
  if (files === undefined || files.length === 0) return null;
  return h('div', { class: 'attachments', role: 'group', 'aria-label': 'Files' }, ...files.map((file) => (isDrawn(file) ? picture(sessionId, file) : download(sessionId, file))));
}
