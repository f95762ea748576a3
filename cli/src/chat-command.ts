import { createInterface } from 'node:readline/promises';
import { userInfo } from 'node:os';
import type { Config } from '@herald/core';
import { followHandoff, isHandoffCommand } from './chat-handoff.ts';

interface Waiting {
  kind: 'approval' | 'clarify';
  tool: string;
  prompt: string;
  choices: string[] | null;
}

interface ReplyBody {
  reply?: { text: string } | null;
  event_id?: string;
  session_id?: string;
  waiting?: Waiting;
  error?: { message: string };
}

/** A parked turn, shown so the person knows what to type next. */
export function describeWaiting(waiting: Waiting): string {
  if (waiting.kind === 'approval') {
    return `herald> Approval needed for ${waiting.tool}: ${waiting.prompt}\n        Reply /approve, /approve session (allow this for the rest of the session) or /deny [reason].\n`;
  }
  const choices = waiting.choices?.length ? `\n        Choices: ${waiting.choices.map((c, i) => `${i + 1}) ${c}`).join('  ')}` : '';
  return `herald> ${waiting.prompt}${choices}\n`;
}

const WAIT_SECONDS = 30;

async function post(config: Config, chatId: string, userId: string, text: string): Promise<ReplyBody & { status: number }> {
  const response = await fetch(`${config.api.url}/v1/messages?wait=${WAIT_SECONDS}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(config.api.token === undefined ? {} : { authorization: `Bearer ${config.api.token}` }),
    },
    body: JSON.stringify({ chat_id: chatId, user_id: userId, user_name: userId, text }),
  });
  return { status: response.status, ...((await response.json()) as ReplyBody) };
}

async function pollEvent(config: Config, eventId: string): Promise<ReplyBody & { status?: string }> {
  const response = await fetch(`${config.api.url}/v1/events/${eventId}`, {
    headers: config.api.token === undefined ? {} : { authorization: `Bearer ${config.api.token}` },
  });
  return (await response.json()) as ReplyBody & { status?: string };
}

/** An interactive terminal chat against the HTTP API: one line in, the reply out. */
export async function runChat(config: Config): Promise<void> {
  const user = userInfo().username;
  const chatId = `cli-${user}`;
  const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: process.stdin.isTTY });
  process.stdout.write(`Herald chat on ${config.api.url}. /new starts a fresh session, /quit leaves.\n`);
  rl.setPrompt('you> ');
  rl.prompt();
  for await (const line of rl) {
    const text = line.trim();
    if (text === '/quit' || text === '/exit') break;
    if (text === '') {
      rl.prompt();
      continue;
    }
    const started = Date.now();
    const ticker = process.stdout.isTTY
      ? setInterval(() => process.stdout.write(`\r… thinking (${Math.round((Date.now() - started) / 1000)}s)`), 1000)
      : undefined;
    try {
      let body = await post(config, chatId, user, text);
      while (body.status === 202 && body.event_id !== undefined && body.waiting === undefined) {
        const event = await pollEvent(config, body.event_id);
        if (event.reply) body = { status: 200, reply: event.reply };
        else if (event.waiting) body = { status: 202, waiting: event.waiting };
        else await new Promise((resolve) => setTimeout(resolve, 1000));
      }
      if (ticker) process.stdout.write('\r\x1b[K');
      if (body.waiting) process.stdout.write(describeWaiting(body.waiting));
      else if (body.reply) process.stdout.write(`herald> ${body.reply.text}\n`);
      else process.stdout.write(`error ${body.status}: ${body.error?.message ?? 'unexpected answer'}\n`);
      if (body.reply && isHandoffCommand(text) && body.reply.text.startsWith('Handing') && body.session_id !== undefined) {
        process.stdout.write(`${await followHandoff(config, body.session_id)}\n`);
      }
    } catch (error) {
      process.stdout.write(`cannot reach Herald at ${config.api.url}: ${(error as Error).message}\n`);
    } finally {
      clearInterval(ticker);
    }
    rl.prompt();
  }
  rl.close();
}
