import { describe, expect, it } from 'vitest';
import { parseNamedChat, TargetSyntaxError } from '@herald/core';
import { markdownToSlackMrkdwn, matchSlackSignature, signSlackBody, slackAdapter, SlackRateGate, slackTextToPlain, verifySlackSignature } from '../src/slack/index.ts';

const SECRET = '8f742231b10e8888abcd99yyyzzz85a5';

function signed(body: string, timestamp: number, secret = SECRET): Record<string, string> {
  return { 'x-slack-request-timestamp': String(timestamp), 'x-slack-signature': `v0=${signSlackBody(secret, String(timestamp), body)}` };
}

describe('Slack, the parts without a server', () => {
  it('verifies v0 signatures on the raw body and refuses forged, tampered, missing and stale ones', () => {
    const now = 1_800_000_000_000;
    const body = 'token=x&payload=%7B%22a%22%3A1%7D';
    const at = now / 1000 - 10;
    expect(verifySlackSignature(SECRET, signed(body, at), body, now)).toBe('ok');
    expect(verifySlackSignature(SECRET, signed(body, at, 'another-secret'), body, now)).toBe('mismatch');
    expect(verifySlackSignature(SECRET, signed(body, at), `${body}&x=1`, now)).toBe('mismatch');
    expect(verifySlackSignature(SECRET, {}, body, now)).toBe('missing');
    expect(verifySlackSignature(SECRET, { ...signed(body, at), 'x-slack-request-timestamp': '12a' }, body, now)).toBe('missing');
    expect(verifySlackSignature(SECRET, signed(body, now / 1000 - 301), body, now)).toBe('stale');
    expect(verifySlackSignature(SECRET, signed(body, now / 1000 + 301), body, now)).toBe('stale');
  });

  it("tells which of several apps' signing secrets signed a request, and refuses one signed by none", () => {
    const now = 1_800_000_000_000;
    const body = '{"type":"event_callback"}';
    const at = now / 1000 - 10;
    const secrets = ['first-secret', SECRET, 'third-secret'];
    expect(matchSlackSignature(secrets, signed(body, at), body, now)).toEqual({ verdict: 'ok', index: 1 });
    expect(matchSlackSignature(secrets, signed(body, at, 'third-secret'), body, now)).toEqual({ verdict: 'ok', index: 2 });
    expect(matchSlackSignature(secrets, signed(body, at, 'no-apps-secret'), body, now)).toEqual({ verdict: 'mismatch' });
    expect(matchSlackSignature([], signed(body, at), body, now)).toEqual({ verdict: 'mismatch' });
    expect(matchSlackSignature(secrets, signed(body, now / 1000 - 301), body, now)).toEqual({ verdict: 'stale' });
    expect(matchSlackSignature(secrets, {}, body, now)).toEqual({ verdict: 'missing' });
  });

  it('writes targets as slack:<channel>[:<thread_ts>] and slack@<account>:<channel>', () => {
    expect(slackAdapter.parseTarget('slack:C0123:1700000000.000100')).toEqual({ platform: 'slack', chatId: 'C0123', threadId: '1700000000.000100' });
    expect(slackAdapter.parseTarget('C0123')).toEqual({ platform: 'slack', chatId: 'C0123' });
    expect(parseNamedChat('slack@ops:C0123')).toEqual({ platform: 'slack', chatId: 'C0123', account: 'ops' });
    expect(parseNamedChat('slack@default:C0123')).toEqual({ platform: 'slack', chatId: 'C0123' });
    expect(slackAdapter.formatTarget({ chatId: 'C0123', account: 'ops' })).toBe('slack@ops:C0123');
    expect(() => parseNamedChat('slack@Bad Name:C1')).toThrow(TargetSyntaxError);
    expect(() => parseNamedChat('slack:C1%00')).toThrow(TargetSyntaxError);
  });

  it('turns markdown into mrkdwn and Slack text back into what the person typed', () => {
    expect(markdownToSlackMrkdwn('**bold** and *it* and ~~gone~~ [site](https://x.example/a?b=1&c=2)')).toBe('*bold* and _it_ and ~gone~ <https://x.example/a?b=1&amp;c=2|site>');
    expect(markdownToSlackMrkdwn('# Title\n- one\n```ts\nif (a < b) {}\n```\n`x<y`')).toBe('*Title*\n• one\n```\nif (a &lt; b) {}\n```\n`x&lt;y`');
    expect(slackTextToPlain('<@UBOT> is 1 &lt; 2 &amp;&amp; <@UOTHER>?', 'UBOT')).toBe('is 1 < 2 && <@UOTHER>?');
  });

  it('spaces calls per method and channel, and pauses a method after a 429', async () => {
    let now = 0;
    const gate = new SlackRateGate(() => now);
    const waits: number[] = [];
    const original = globalThis.setTimeout;
    // Count the waits without sleeping them.
    globalThis.setTimeout = ((fn: () => void, ms: number) => {
      waits.push(ms);
      return original(fn, 0);
    }) as typeof setTimeout;
    try {
      await gate.take('chat.postMessage', 'C1');
      await gate.take('chat.postMessage', 'C2');
      await gate.take('chat.postMessage', 'C1');
      gate.pause('chat.update', 5000);
      await gate.take('chat.update', 'C3');
      now = 10_000;
      await gate.take('auth.test', 'C1');
    } finally {
      globalThis.setTimeout = original;
    }
    expect(waits).toEqual([250, 1000, 5000]);
  });
});
