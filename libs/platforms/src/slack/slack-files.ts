import { AttachmentRefusedError, readResponseCapped } from '@herald/attachments';
import type { IncomingFile } from '@herald/attachments';
import type { SlackConfig } from '@herald/core';

/** A file object of a message event, the part Herald reads (Slack Connect and deleted files have no URL). */
export interface SlackFile {
  id?: string;
  name?: string;
  size?: number;
  mode?: string;
  url_private_download?: string;
  url_private?: string;
}

/** Where Slack serves private files; the bot token goes to no other host (and the configured API's, for tests and proxies). */
const SLACK_FILE_ORIGINS = ['https://files.slack.com'];

/** The files of a message, each fetched only when read, with the bot token as Bearer, under the cap. */
export function slackIncomingFiles(files: readonly SlackFile[] | undefined, config: Pick<SlackConfig, 'botToken' | 'apiUrl'>): IncomingFile[] {
  return (Array.isArray(files) ? files : []).filter((file) => file.mode !== 'tombstone').map((file, index) => slackIncomingFile(file, index, config));
}

function slackIncomingFile(file: SlackFile, index: number, config: Pick<SlackConfig, 'botToken' | 'apiUrl'>): IncomingFile {
  const name = file.name ?? `file-${file.id ?? index}`;
  return {
    name,
    declaredBytes: file.size,
    read: async (maxBytes) => {
      const url = fileUrl(file.url_private_download ?? file.url_private, config.apiUrl);
      if (url === undefined) throw new AttachmentRefusedError(`${name}: Slack would not hand it over`);
      const response = await fetch(url, { headers: { authorization: `Bearer ${config.botToken}` }, signal: AbortSignal.timeout(120_000) });
      if (!response.ok) throw new Error(`Slack file download failed: HTTP ${response.status}`);
      return readResponseCapped(response, name, maxBytes);
    },
  };
}

/** The file's URL when it is on a host of Slack's: the bot token must not follow a link elsewhere. */
function fileUrl(raw: string | undefined, apiUrl: string): URL | undefined {
  if (raw === undefined) return undefined;
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  if (url === undefined) return undefined;
  return [...SLACK_FILE_ORIGINS, new URL(apiUrl).origin].includes(url.origin) ? url : undefined;
}
