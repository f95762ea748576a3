/**
 * Markdown as the models write it, turned into the HTML subset Telegram renders (parse_mode HTML).
 * HTML rather than MarkdownV2: MarkdownV2 needs 18 characters escaped everywhere outside entities,
 * and one miss rejects the whole message; HTML needs only &, < and >.
 */
export function markdownToTelegramHtml(markdown: string): string {
  const out: string[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const fence = /^\s*(`{3,}|~{3,})\s*([\w+#.-]*)\s*$/.exec(line);
    if (fence) {
      const marker = fence[1] ?? '```';
      const body: string[] = [];
      i++;
      while (i < lines.length && !(lines[i] ?? '').trim().startsWith(marker)) body.push(lines[i++] ?? '');
      const language = fence[2] ? ` class="language-${escapeHtml(fence[2])}"` : '';
      out.push(`<pre><code${language}>${escapeHtml(body.join('\n'))}</code></pre>`);
      continue;
    }
    const heading = /^#{1,6}\s+(.*)$/.exec(line);
    if (heading) {
      out.push(`<b>${inline(heading[1] ?? '')}</b>`);
      continue;
    }
    const quote = /^>\s?(.*)$/.exec(line);
    if (quote) {
      out.push(`<blockquote>${inline(quote[1] ?? '')}</blockquote>`);
      continue;
    }
    const bullet = /^(\s*)[-*+]\s+(.*)$/.exec(line);
    if (bullet) {
      out.push(`${bullet[1] ?? ''}• ${inline(bullet[2] ?? '')}`);
      continue;
    }
    out.push(inline(line));
  }
  return out.join('\n');
}

export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Inline code first (its content is literal), then links, bold, italic and strikethrough. */
function inline(text: string): string {
  return text
    .split(/(`[^`\n]+`)/)
    .map((segment, index) => {
      if (index % 2 === 1) return `<code>${escapeHtml(segment.slice(1, -1))}</code>`;
      return escapeHtml(segment)
        .replace(/\[([^\]\n]+)\]\((https?:\/\/[^)\s]+)\)/g, (_m, label: string, href: string) => `<a href="${href.replace(/"/g, '&quot;')}">${label}</a>`)
        .replace(/\*\*(?=\S)(.+?)(?<=\S)\*\*/g, '<b>$1</b>')
        .replace(/__(?=\S)(.+?)(?<=\S)__/g, '<b>$1</b>')
        .replace(/(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])/g, '<i>$1</i>')
        .replace(/(?<![\w])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w])/g, '<i>$1</i>')
        .replace(/~~(?=\S)(.+?)(?<=\S)~~/g, '<s>$1</s>');
    })
    .join('');
}
