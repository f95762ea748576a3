import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeAnthropic, startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM, FakeRequest } from './support/fake-llm.ts';
import { startStack } from './support/stack.ts';
import type { Stack } from './support/stack.ts';

// Issue 36 point 2: an image past the provider's limits reaches the model scaled down, its aspect kept.

/** A 4000x3000 PNG: a gradient, so it is small to send yet far past every provider's pixel limit. */
async function bigPng(): Promise<Buffer> {
  const width = 4000;
  const height = 3000;
  const raw = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      raw[i] = x % 256;
      raw[i + 1] = y % 256;
      raw[i + 2] = 128;
    }
  }
  return sharp(raw, { raw: { width, height, channels: 3 } })
    .png()
    .toBuffer();
}

/** Every image the fake model received in user messages, as bytes, whichever wire format it speaks. */
function receivedImages(request: FakeRequest): { mime: string; bytes: Buffer }[] {
  const messages = (request.body.messages ?? []) as { role: string; content: unknown }[];
  return messages.flatMap((message) => {
    if (message.role !== 'user' || !Array.isArray(message.content)) return [];
    return (message.content as Record<string, unknown>[]).flatMap((part) => {
      if (part['type'] === 'image_url') {
        const match = /^data:([^;]+);base64,(.*)$/.exec((part['image_url'] as { url: string }).url);
        return match ? [{ mime: match[1] ?? '', bytes: Buffer.from(match[2] ?? '', 'base64') }] : [];
      }
      if (part['type'] === 'image') {
        const source = part['source'] as { media_type: string; data: string };
        return [{ mime: source.media_type, bytes: Buffer.from(source.data, 'base64') }];
      }
      return [];
    });
  });
}

describe('images scaled to the provider before the model (issue 36)', () => {
  let stack: Stack | undefined;
  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
  });

  async function sendThrough(llm: FakeLLM, png: Buffer): Promise<{ mime: string; bytes: Buffer }[]> {
    const seen: { mime: string; bytes: Buffer }[][] = [];
    llm.handler = (request) => {
      seen.push(receivedImages(request));
      return { text: 'seen' };
    };
    stack = await startStack({ model: llm, env: { HERALD_MODEL_VISION: 'on', HERALD_MAX_ATTACHMENT_MB: '20' } });
    const response = await stack.post('/v1/messages?wait=30', {
      chat_id: 'big-image',
      user_id: 'u1',
      text: 'what is this',
      attachments: [{ name: 'wall.png', data: png.toString('base64') }],
    });
    expect(response.status).toBe(200);
    expect(response.body.reply.text).toBe('seen');
    return seen.flat();
  }

  it('gives OpenAI a 4000x3000 PNG as 1024x768 (2048 box, then 768 on the short side)', async () => {
    const images = await sendThrough(await startFakeOpenAI(), await bigPng());
    expect(images).toHaveLength(1);
    const meta = await sharp(images[0]?.bytes).metadata();
    expect([meta.width, meta.height]).toEqual([1024, 768]);
    expect(images[0]?.mime).toBe('image/png');
    expect(meta.format).toBe('png');
  }, 60_000);

  it('gives Anthropic the same PNG within 1568 px and 5 MB, aspect kept', async () => {
    const images = await sendThrough(await startFakeAnthropic(), await bigPng());
    expect(images).toHaveLength(1);
    const meta = await sharp(images[0]?.bytes).metadata();
    expect([meta.width, meta.height]).toEqual([1568, 1176]);
    expect(images[0]?.bytes.length).toBeLessThanOrEqual(5 * 1024 * 1024);
  }, 60_000);
});
