import { Marked } from 'marked';
import type { Renderer, Tokens } from 'marked';

/** What a report becomes in a mail: an HTML part and its plain-text alternative. */
export interface MailBody {
  html: string;
  text: string;
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Links a mail reader may follow; anything else (javascript:, data:, file:) is shown as its text. */
const SAFE_LINK = /^(https?:|mailto:)/i;

/**
 * The model's markdown, rendered by marked (GitHub-flavoured), with two refusals: raw HTML in the
 * text is shown as text, never rendered (a report quotes pages and mails it read, and must not turn
 * their markup into ours), and links and images keep only http(s) and mailto destinations (images
 * become links: a reader fetching them on open would tell the sender who read it).
 */
const markdown = new Marked({
  gfm: true,
  async: false,
  renderer: {
    html: ({ text }: Tokens.HTML | Tokens.Tag) => escapeHtml(text),
    link(this: Renderer, token: Tokens.Link) {
      const inner = this.parser.parseInline(token.tokens);
      return SAFE_LINK.test(token.href) ? `<a href="${escapeHtml(token.href)}">${inner}</a>` : inner;
    },
    image: ({ href, text }: Tokens.Image) => (SAFE_LINK.test(href) ? `<a href="${escapeHtml(href)}">${escapeHtml(text || href)}</a>` : escapeHtml(text)),
  },
});

/** The report as a mail: HTML rendered from its markdown, and the markdown itself as the text part. */
export function mailBody(report: string, title: string): MailBody {
  const rendered = markdown.parse(report, { async: false });
  const html =
    '<!doctype html>\n<html><head><meta charset="utf-8"><title>' + escapeHtml(title) + '</title></head>\n<body style="font-family: sans-serif; line-height: 1.4">\n' + rendered + '</body></html>\n';
  return { html, text: report.endsWith('\n') ? report : `${report}\n` };
}
