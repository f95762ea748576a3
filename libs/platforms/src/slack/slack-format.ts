/**
 * Markdown as the models write it, turned into Slack's mrkdwn: `*bold*`, `_italic_`, `~strike~`,
 * `<url|text>` links, fenced code kept (without its language), headings as bold lines and list
 * bullets as `•`. Slack wants `&`, `<` and `>` escaped everywhere, code included; anything else
 * passes through as text.
 */
export function markdownToSlackMrkdwn(markdown: string): string {
  const out: string[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const fence = /^\s*(`{3,}|~{3,})\s*[\w+#.-]*\s*$/.exec(line);
    if (fence) {
      const marker = fence[1] ?? '```';
      const body: string[] = [];
      i++;
      while (i < lines.length && !(lines[i] ?? '').trim().startsWith(marker)) body.push(lines[i++] ?? '');
      out.push(`\`\`\`\n${escapeSlack(body.join('\n'))}\n\`\`\``);
      continue;
    }
    out.push(blockLine(line));
  }
  return out.join('\n');
}

function blockLine(line: string): string {
  const heading = /^#{1,6}\s+(.*)$/.exec(line);
  if (heading) return `*${inline(heading[1] ?? '').replace(/\*/g, '')}*`;
  const bullet = /^(\s*)[-*+]\s+(.*)$/.exec(line);
  if (bullet) return `${bullet[1] ?? ''}• ${inline(bullet[2] ?? '')}`;
  const quote = /^>\s?(.*)$/.exec(line);
  if (quote) return `&gt; ${inline(quote[1] ?? '')}`;
  return inline(line);
}

/** &, < and >: the three characters Slack reads as control (links, mentions) in message text. */
export function escapeSlack(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Inline code spans are kept as they are (escaped); the text between them is converted. */
function inline(text: string): string {
  return text
    .split(/(`[^`\n]+`)/)
    .map((piece, index) => (index % 2 === 1 ? escapeSlack(piece) : emphasis(escapeSlack(piece))))
    .join('');
}

// A private-use character marks converted bold while italics are converted, so `**a**` does not
// come out as `_a_`.
const BOLD = '\uE000';

function emphasis(text: string): string {
  return text
    .replace(/\[([^\]\n]+)\]\((https?:\/\/[^)\s]+)\)/g, (_match, label: string, url: string) => `<${url}|${label.replace(/\|/g, '¦')}>`)
    .replace(/\*\*(?=\S)(.+?)\*\*/g, `${BOLD}$1${BOLD}`)
    .replace(/__(?=\S)(.+?)__/g, `${BOLD}$1${BOLD}`)
    .replace(/(^|[^\w*])\*(?=\S)([^*\n]+?)\*(?!\w)/g, '$1_$2_')
    .replace(/~~(?=\S)(.+?)~~/g, '~$1~')
    .replaceAll(BOLD, '*');
}

/**
 * Slack's own escapes undone and its mentions of the bot taken out: what a person typed, as the
 * model should read it. Other mentions (`<@U123>`), channels and links stay in Slack's notation.
 */
export function slackTextToPlain(text: string, botUserId: string): string {
  return text
    .replace(new RegExp(`<@${botUserId}(\\|[^>]*)?>`, 'g'), ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .replace(/[ \t]{2,}/g, ' ')
    .trim();
}
