import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM, FakeReply, FakeRequest } from './support/fake-llm.ts';
import { startFakeHttp } from './support/fake-http.ts';
import type { FakeHttpServer } from './support/fake-http.ts';
import { PROCESS_START_MS, startStack } from './support/stack.ts';
import type { Stack } from './support/stack.ts';

const PNG_PREFIX = Buffer.from([0x89, 0x50, 0x4e, 0x47]).toString('base64').slice(0, 4);

/** Opens the page, takes a screenshot, then answers with what the screenshot's result said. */
function browseThenLook(site: FakeHttpServer) {
  return (request: FakeRequest): FakeReply => {
    const results = request.messages.filter((m) => m.role === 'tool');
    if (results.length === 0) return { toolCalls: [{ name: 'browser_navigate', arguments: { url: `${site.origin}/` } }] };
    if (results.length === 1) return { toolCalls: [{ name: 'browser_vision', arguments: { question: 'what colour?' } }] };
    return { text: `seen: ${results[1]?.content ?? ''}` };
  };
}

type Wire = { role: string; content: unknown }[];

// Issue 40, point 3: browser_vision's screenshot reaches a model that takes images as image content.
describe('the browser screenshot to the model (real Chromium)', { timeout: 4 * PROCESS_START_MS }, () => {
  let site: FakeHttpServer;
  const running: { stack: Stack; llm: FakeLLM }[] = [];

  beforeAll(async () => {
    site = await startFakeHttp((_request, response) => {
      response.setHeader('content-type', 'text/html');
      response.end('<!doctype html><title>Dashboard</title><body style="background:#c00"><h1>All red</h1></body>');
    });
  });
  afterAll(async () => {
    for (const { stack, llm } of running) {
      await stack.stop();
      await llm.close();
    }
    await site.close();
  });

  const ask = async (llm: FakeLLM, vision: 'on' | 'off') => {
    llm.handler = browseThenLook(site);
    const stack = await startStack({ model: llm, env: { HERALD_MODEL_VISION: vision, HERALD_WEB_ALLOWLIST: '127.0.0.1' } });
    running.push({ stack, llm });
    expect((await stack.patch('/v1/profiles/main', { tool_policy: { enabled: ['herald-api', 'browser'] } })).status).toBe(200);
    const response = await stack.post('/v1/messages?wait=60', { chat_id: `shot-${vision}`, user_id: 'u1', text: 'look at the dashboard' });
    expect(response.status).toBe(200);
    // Each stack has its own fake model: all its requests are this conversation's.
    return { reply: response.body.reply.text as string, requests: llm.requests };
  };

  it('OpenAI-compatible: the tool message stays text, and the image follows as a user image_url part', async () => {
    const { reply, requests } = await ask(await startFakeOpenAI(), 'on');
    expect(reply).toMatch(/Screenshot saved to screenshots\/\d+\.png in the workspace\. The image is attached/);
    const wire = requests.at(-1)!.body.messages as Wire;
    const toolIndex = wire.findLastIndex((m) => m.role === 'tool');
    expect(typeof wire[toolIndex]!.content).toBe('string');
    const after = wire[toolIndex + 1]!;
    expect(after.role).toBe('user');
    const parts = after.content as { type: string; text?: string; image_url?: { url: string } }[];
    expect(parts[0]).toMatchObject({ type: 'text', text: expect.stringContaining('browser_vision') });
    expect(parts[1]!.image_url!.url.startsWith(`data:image/png;base64,${PNG_PREFIX}`)).toBe(true);
  });

  it('Anthropic: the image is a block inside the tool_result', async () => {
    const { reply, requests } = await ask(await startFakeAnthropic(), 'on');
    expect(reply).toContain('The image is attached');
    const wire = requests.at(-1)!.body.messages as { role: string; content: { type: string; content?: unknown }[] | string }[];
    const results = wire.flatMap((m) => (Array.isArray(m.content) ? m.content.filter((b) => b.type === 'tool_result') : []));
    const shot = results.at(-1)!.content as { type: string; text?: string; source?: { media_type: string; data: string } }[];
    expect(shot[0]).toMatchObject({ type: 'text', text: expect.stringContaining('Screenshot saved') });
    expect(shot[1]).toMatchObject({ type: 'image', source: { type: 'base64', media_type: 'image/png' } });
    expect(shot[1]!.source!.data.startsWith(PNG_PREFIX)).toBe(true);
  });

  it('a model without vision gets the text note only', async () => {
    const { reply, requests } = await ask(await startFakeOpenAI(), 'off');
    expect(reply).toContain('This model cannot be shown images');
    const wire = requests.at(-1)!.body.messages as Wire;
    expect(wire.some((m) => Array.isArray(m.content))).toBe(false);
  });
});
