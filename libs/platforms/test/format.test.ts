import { describe, expect, it } from 'vitest';
import { splitMarkdown } from '@herald/platforms';
import { discordNonce } from '@herald/platforms/discord';
import { markdownToTelegramHtml, telegramChunks } from '@herald/platforms/telegram';

describe('splitting and formatting', () => {
  it('keeps short text whole and splits long text on paragraph boundaries first', () => {
    expect(splitMarkdown('  short  ', 100)).toEqual(['short']);
    const paragraphs = ['a'.repeat(60), 'b'.repeat(60), 'c'.repeat(60)];
    expect(splitMarkdown(paragraphs.join('\n\n'), 130)).toEqual([`${paragraphs[0]}\n\n${paragraphs[1]}`, paragraphs[2]]);
  });

  it('cuts a too-long code block between lines and fences every piece', () => {
    const code = '```py\n' + Array.from({ length: 30 }, (_, i) => `print(${i})`).join('\n') + '\n```';
    const chunks = splitMarkdown(code, 100);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(100);
      expect(chunk.startsWith('```py\n')).toBe(true);
      expect(chunk.endsWith('\n```')).toBe(true);
    }
    const lines = chunks.flatMap((chunk) => chunk.split('\n').slice(1, -1));
    expect(lines).toEqual(Array.from({ length: 30 }, (_, i) => `print(${i})`));
  });

  it('cuts a single overlong line at spaces', () => {
    const chunks = splitMarkdown('word '.repeat(100).trim(), 50);
    for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(50);
    expect(chunks.join(' ')).toBe('word '.repeat(100).trim());
  });

  it('turns Markdown into the HTML Telegram renders, escaping the rest', () => {
    expect(markdownToTelegramHtml('# Title\n**bold** and *it* and `a<b>` and [x](https://e.com/?a=1&b=2) ~~no~~ 1 < 2 & 3 > 2')).toBe(
      '<b>Title</b>\n<b>bold</b> and <i>it</i> and <code>a&lt;b&gt;</code> and <a href="https://e.com/?a=1&amp;b=2">x</a> <s>no</s> 1 &lt; 2 &amp; 3 &gt; 2',
    );
    expect(markdownToTelegramHtml('```js\nif (a < b) {}\n```\n- item')).toBe('<pre><code class="language-js">if (a &lt; b) {}</code></pre>\n• item');
    expect(markdownToTelegramHtml('snake_case_name stays')).toBe('snake_case_name stays');
  });

  it('re-splits a chunk whose HTML outgrows the limit', () => {
    const text = '<'.repeat(4000);
    const chunks = telegramChunks(text);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) expect(chunk.html.length).toBeLessThanOrEqual(4096);
    expect(chunks.map((chunk) => chunk.plain).join('')).toBe(text);
  });

  it('derives a stable 25-character Discord nonce per row and part', () => {
    expect(discordNonce('row', 0)).toBe(discordNonce('row', 0));
    expect(discordNonce('row', 0)).not.toBe(discordNonce('row', 1));
    expect(discordNonce('row', 0)).toHaveLength(25);
  });
});
