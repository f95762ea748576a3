import { eventAttachments, fitImageForModel, imageLimitsFor, mayCarryFiles, modelTakesImages, readBlob } from '@herald/attachments';
import type { Attachment, ImageLimits } from '@herald/attachments';
import type { ChatMessage, ImageInput, Provider } from '@herald/agent';
import type { Config, Logger } from '@herald/core';
import type { Db } from '@herald/db';
import type { PendingEvent } from '@herald/leases';
import { resolveWorkspacePath, writeWorkspaceFile } from '@herald/tools';

interface AttachmentDependencies {
  config: Config;
  db: Db;
  logger: Logger;
}

/**
 * The turn's messages with their files in place: every file of the turn's events is written into
 * the session's workspace (attachments/<name>, where the message's text line points), and images
 * go to a model that takes them as image content; to one that does not, a line saying so. Only this
 * turn's messages get images: later turns read the text line, not the picture again.
 */
export async function withAttachments(deps: AttachmentDependencies, workspace: string, provider: Provider, events: readonly PendingEvent[], history: ChatMessage[]): Promise<ChatMessage[]> {
  const byEvent = await eventAttachments(
    deps.db,
    events.filter((event) => mayCarryFiles(event.text)).map((event) => event.id),
  );
  if (byEvent.size === 0) return history;
  // Images go scaled down to the provider's limits; without vision, none go at all.
  const limits = modelTakesImages(provider.model, deps.config.attachments.vision) ? imageLimitsFor(provider.name) : undefined;
  const out = [...history];
  const used = new Set<number>();
  for (const event of events) {
    const files = byEvent.get(event.id);
    if (!files) continue;
    const index = lastUserMessage(out, event.text, used);
    const extra = await placeFiles(deps, workspace, files, limits);
    const message = index === undefined ? undefined : out[index];
    if (index === undefined || message?.role !== 'user') continue;
    used.add(index);
    out[index] = {
      role: 'user',
      content: extra.notes.length === 0 ? message.content : `${message.content}\n${extra.notes.join('\n')}`,
      ...(extra.images.length === 0 ? {} : { images: extra.images }),
    };
  }
  return out;
}

function lastUserMessage(messages: readonly ChatMessage[], text: string, used: ReadonlySet<number>): number | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role === 'user' && message.content === text && !used.has(i)) return i;
  }
  return undefined;
}

async function placeFiles(deps: AttachmentDependencies, workspace: string, files: readonly Attachment[], limits: ImageLimits | undefined): Promise<{ images: ImageInput[]; notes: string[] }> {
  const images: ImageInput[] = [];
  const notes: string[] = [];
  for (const file of files) {
    const bytes = await readBlob(deps.db, file.sha256);
    if (bytes === undefined) {
      notes.push(`(${file.path} is no longer stored)`);
      continue;
    }
    await writeWorkspaceFile(await resolveWorkspacePath(workspace, file.path), bytes).catch((error: unknown) => {
      deps.logger.warn({ err: error, path: file.path }, 'attachment not written into the workspace');
      notes.push(`(${file.path} could not be written into your workspace: ${(error as Error).message})`);
    });
    if (file.kind !== 'image') continue;
    if (limits === undefined) {
      notes.push(`(An image was sent; this model cannot see images. It is saved as ${file.path}.)`);
      continue;
    }
    const fitted = await fitImageForModel(bytes, file.mime, limits);
    if (fitted === undefined) notes.push(`(The image ${file.path} could not be made small enough to show the model; it is in the workspace.)`);
    else images.push({ mime: fitted.mime, data: fitted.bytes.toString('base64') });
  }
  return { images, notes };
}
