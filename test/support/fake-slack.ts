import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { WebSocketServer } from 'ws';
import type { WebSocket } from 'ws';
import { signSlackBody } from '@herald/platforms/slack';
import { sendJson, startFakeHttp } from './fake-http.ts';
import { parseMultipart } from './multipart.ts';
import type { FakeHttpRequest } from './fake-http.ts';

/**
 * A local stand-in for Slack, spoken to by @slack/web-api (SLACK_API_URL) and @slack/socket-mode:
 * the Web API methods Herald calls (auth.test, chat.postMessage, chat.update, chat.delete, chat.postEphemeral,
 * reactions.add/remove, users.info, conversations.info, apps.connections.open) and Socket Mode's
 * WebSocket (hello, events_api and interactive envelopes, acks, disconnect), private files a message
 * shares (downloaded with the bot token as Bearer) and the upload flow of files.uploadV2
 * (files.getUploadURLExternal, the upload, files.completeUploadExternal). It fails on demand:
 * a 429 with Retry-After for a method, or every call a 503 (an outage).
 */

export const TEAM = 'T0TEAM';
export const BOT_USER = 'U0HERALD';
export const BOT_ID = 'B0HERALD';
export const BOT_TOKEN = 'xoxb-1-fake-bot-token';
export const APP_TOKEN = 'xapp-1-A0FAKEAPP-1-fakeapptoken';
export const SIGNING_SECRET = 'fake-signing-secret-0123456789';

/** One Slack app of the fake: its bot (user and token), its app-level token and its signing secret. */
export interface FakeSlackApp {
  appId: string;
  botUser: string;
  botId: string;
  botToken: string;
  appToken: string;
  signingSecret: string;
}

/** The app every test talks to unless it names another: SLACK_BOT_TOKEN's. */
export const FIRST_APP: FakeSlackApp = { appId: 'A0FAKEAPP', botUser: BOT_USER, botId: BOT_ID, botToken: BOT_TOKEN, appToken: APP_TOKEN, signingSecret: SIGNING_SECRET };

/** A second app in the same workspace (another bot, another agent): HERALD_PLATFORMS_FILE's. */
export const SECOND_APP: FakeSlackApp = {
  appId: 'A0SECOND',
  botUser: 'U0SECOND',
  botId: 'B0SECOND',
  botToken: 'xoxb-2-second-bot-token',
  appToken: 'xapp-1-A0SECOND-2-secondapptoken',
  signingSecret: 'second-signing-secret-9876543210',
};

export interface PostedMessage {
  channel: string;
  /** The bot user of the app whose token posted it. */
  by: string;
  ts: string;
  text: string;
  thread_ts?: string;
  blocks?: any[];
  metadata?: { event_type: string; event_payload: Record<string, unknown> };
  /** Set after a chat.update. */
  edits: string[];
  /** When the fake received it (ms since the epoch). */
  at: number;
}

/** A file the bot shared with files.completeUploadExternal, with the bytes uploaded for it. */
export interface UploadedFile {
  id: string;
  filename: string;
  title?: string;
  channel: string;
  thread_ts?: string;
  initial_comment?: string;
  bytes: Buffer;
}

export interface FakeSlack {
  url: string;
  env: Record<string, string>;
  /** Every Web API call: method, parsed arguments, the time. */
  calls: { method: string; args: Record<string, any>; at: number }[];
  messages: PostedMessage[];
  ephemerals: { channel: string; user: string; text: string }[];
  reactions: { method: string; channel: string; timestamp: string; name: string }[];
  /** Socket Mode: WebSockets opened so far, and those open now. */
  socketsOpened(): number;
  openSockets(): number;
  /** Acknowledged envelope ids. */
  acks: string[];
  /** The ts of every message removed with chat.delete. */
  deleted: string[];
  /** Files the bot shared (the upload flow completed). */
  uploads: UploadedFile[];
  /** Downloads of hosted files: which file, and whether the bot token came with it. */
  downloads: { id: string; authorized: boolean }[];
  /** Hosts a file a person shares; returns Slack's file object for a message event's `files`. */
  hostFile(name: string, bytes: Buffer, mimetype: string): Record<string, any>;
  botMessages(channel: string, threadTs?: string): PostedMessage[];
  /** Sends an events_api envelope on every open socket of the app (the first unless named); returns its envelope id. */
  pushEvent(payload: Record<string, any>, app?: FakeSlackApp): string;
  /** Sends an interactive envelope (a button press) on every open socket of the app. */
  pushInteraction(payload: Record<string, any>, app?: FakeSlackApp): string;
  /** Socket Mode: the sockets of one app open now. */
  openSocketsOf(app: FakeSlackApp): number;
  /** Asks every connected client to reconnect (Slack recycling its connection). */
  sendDisconnect(): void;
  /** Drops every socket without a word (the network). */
  dropSockets(): void;
  rateLimitNext(method: string, retryAfterSeconds: number): void;
  /** The next call of `method` does its work, then never answers (the ambiguous timeout). */
  hangNext(method: string): void;
  /** While true, every Web API call answers 503. */
  outage: boolean;
  close(): Promise<void>;
}

/** An event_callback envelope around a message event, as Slack sends it to `app` (the first unless named). */
export function messageEnvelope(event: Record<string, any>, eventId = `Ev${randomUUID().slice(0, 8)}`, app: FakeSlackApp = FIRST_APP): Record<string, any> {
  return {
    token: 'deprecated',
    team_id: TEAM,
    api_app_id: app.appId,
    type: 'event_callback',
    event_id: eventId,
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [{ team_id: TEAM, user_id: app.botUser, is_bot: true }],
    event: { team: TEAM, event_ts: event.ts, ...event },
  };
}

/** A block_actions payload: `user` pressed the button with `value` under the bot message `message`. */
export function buttonPayload(user: string, message: PostedMessage, value: string): Record<string, any> {
  return {
    type: 'block_actions',
    user: { id: user, team_id: TEAM, username: user.toLowerCase() },
    team: { id: TEAM },
    channel: { id: message.channel },
    container: { type: 'message', channel_id: message.channel, message_ts: message.ts, ...(message.thread_ts ? { thread_ts: message.thread_ts } : {}) },
    message: { ts: message.ts, ...(message.thread_ts ? { thread_ts: message.thread_ts } : {}) },
    actions: [{ type: 'button', action_id: value, value, block_id: 'b', action_ts: `${Date.now() / 1000}` }],
    trigger_id: 'trigger',
    response_url: 'https://hooks.slack.invalid/response',
  };
}

/** Headers Slack would sign `body` with at `timestamp` (seconds). */
export function slackSignatureHeaders(body: string, timestamp = Math.floor(Date.now() / 1000), secret = SIGNING_SECRET): Record<string, string> {
  return { 'x-slack-request-timestamp': String(timestamp), 'x-slack-signature': `v0=${signSlackBody(secret, String(timestamp), body)}` };
}

/** The Web API's arguments: @slack/web-api posts them form-encoded, objects as JSON strings. */
function argumentsOf(request: FakeHttpRequest): Record<string, any> {
  if (typeof request.body === 'object' && request.body !== null) return request.body;
  const args: Record<string, any> = {};
  for (const [name, value] of new URLSearchParams(request.raw)) {
    args[name] = /^[[{]/.test(value) ? JSON.parse(value) : value;
  }
  return args;
}

/** The fake Slack; its apps share one workspace, each known by its tokens (the first is SLACK_BOT_TOKEN's). */
export async function startFakeSlack(apps: readonly FakeSlackApp[] = [FIRST_APP]): Promise<FakeSlack> {
  const appOf = (token: string) => apps.find((app) => app.botToken === token || app.appToken === token);
  let counter = 0;
  const nextTs = () => `${Math.floor(Date.now() / 1000)}.${String(++counter).padStart(6, '0')}`;
  const limits = new Map<string, number>();
  const hangs = new Set<string>();
  const listed = (messages: PostedMessage[], args: Record<string, any>) =>
    [...messages].reverse().map((m) => ({ type: 'message', ts: m.ts, text: m.text, user: m.by, ...(m.metadata && String(args.include_all_metadata) === 'true' ? { metadata: m.metadata } : {}) }));
  const sockets = new Map<WebSocket, string>();
  let opened = 0;
  const state = {
    calls: [] as FakeSlack['calls'],
    messages: [] as PostedMessage[],
    ephemerals: [] as FakeSlack['ephemerals'],
    reactions: [] as FakeSlack['reactions'],
    acks: [] as string[],
    deleted: [] as string[],
    uploads: [] as UploadedFile[],
    downloads: [] as FakeSlack['downloads'],
    outage: false,
  };
  let origin = '';
  const hosted = new Map<string, Buffer>();
  const pending = new Map<string, { filename: string; length: number; bytes?: Buffer }>();
  let fileCounter = 0;

  const methods: Record<string, (args: Record<string, any>, token: string) => Record<string, any>> = {
    'auth.test': (_args, token) => {
      const app = appOf(token);
      return app ? { user_id: app.botUser, bot_id: app.botId, team_id: TEAM, team: 'Fake Team', user: 'herald', url: 'https://fake.slack.invalid/' } : { ok: false, error: 'invalid_auth' };
    },
    'chat.postMessage': (args, token) => {
      const message: PostedMessage = {
        channel: args.channel,
        by: appOf(token)?.botUser ?? 'unknown',
        ts: nextTs(),
        text: args.text ?? '',
        edits: [],
        at: Date.now(),
        ...(args.thread_ts ? { thread_ts: args.thread_ts } : {}),
        ...(args.blocks ? { blocks: args.blocks } : {}),
        ...(args.metadata ? { metadata: args.metadata } : {}),
      };
      state.messages.push(message);
      return { channel: args.channel, ts: message.ts, message: { text: message.text, ts: message.ts, user: message.by } };
    },
    'chat.update': (args, token) => {
      const message = state.messages.find((m) => m.channel === args.channel && m.ts === args.ts);
      if (!message) return { ok: false, error: 'message_not_found' };
      // As Slack: a bot edits only its own messages.
      if (message.by !== appOf(token)?.botUser) return { ok: false, error: 'cant_update_message' };
      message.edits.push(args.text);
      message.text = args.text;
      if (args.blocks) message.blocks = args.blocks;
      return { channel: args.channel, ts: args.ts, text: args.text };
    },
    'chat.delete': (args, token) => {
      const index = state.messages.findIndex((m) => m.channel === args.channel && m.ts === args.ts);
      if (index < 0) return { ok: false, error: 'message_not_found' };
      if (state.messages[index]?.by !== appOf(token)?.botUser) return { ok: false, error: 'cant_delete_message' };
      state.messages.splice(index, 1);
      state.deleted.push(args.ts);
      return { channel: args.channel, ts: args.ts };
    },
    'chat.postEphemeral': (args) => {
      state.ephemerals.push({ channel: args.channel, user: args.user, text: args.text });
      return { message_ts: nextTs() };
    },
    'reactions.add': (args) => {
      state.reactions.push({ method: 'reactions.add', channel: args.channel, timestamp: args.timestamp, name: args.name });
      return {};
    },
    'reactions.remove': (args) => {
      state.reactions.push({ method: 'reactions.remove', channel: args.channel, timestamp: args.timestamp, name: args.name });
      return {};
    },
    // Newest first, as Slack lists them; metadata only when asked for.
    'conversations.history': (args) => ({
      messages: listed(
        state.messages.filter((m) => m.channel === args.channel && m.thread_ts === undefined),
        args,
      ),
    }),
    'conversations.replies': (args) => ({
      messages: listed(
        state.messages.filter((m) => m.channel === args.channel && m.thread_ts === args.ts),
        args,
      ),
    }),
    'users.info': (args) => ({ user: { id: args.user, team_id: TEAM, name: String(args.user).toLowerCase(), is_bot: false } }),
    'conversations.info': (args) => ({ channel: { id: args.channel, is_channel: String(args.channel).startsWith('C'), is_im: String(args.channel).startsWith('D') } }),
    'files.getUploadURLExternal': (args) => {
      if (!args.filename || !(Number(args.length) > 0)) return { ok: false, error: 'invalid_arguments' };
      const id = `F0UP${++fileCounter}`;
      pending.set(id, { filename: String(args.filename), length: Number(args.length) });
      return { upload_url: `${origin}/upload/v1/${id}`, file_id: id };
    },
    'files.completeUploadExternal': (args) => {
      const files = (Array.isArray(args.files) ? args.files : []) as { id: string; title?: string }[];
      const ready = files.map((file) => ({ file, upload: pending.get(file.id) }));
      if (ready.some((entry) => entry.upload?.bytes === undefined)) return { ok: false, error: 'file_not_found' };
      for (const { file, upload } of ready) {
        pending.delete(file.id);
        state.uploads.push({
          id: file.id,
          filename: upload!.filename,
          bytes: upload!.bytes!,
          channel: args.channel_id,
          ...(file.title ? { title: file.title } : {}),
          ...(args.thread_ts ? { thread_ts: args.thread_ts } : {}),
          ...(args.initial_comment ? { initial_comment: args.initial_comment } : {}),
        });
      }
      return { files: files.map((file) => ({ id: file.id, title: file.title ?? '' })) };
    },
    'apps.connections.open': (_args, token) => {
      const app = token.startsWith('xapp-') ? appOf(token) : undefined;
      return app
        ? { url: `${origin.replace('http', 'ws')}/link?app=${app.appId}&ticket=${randomUUID()}` }
        : { ok: false, error: token.startsWith('xapp-') ? 'invalid_auth' : 'not_allowed_token_type' };
    },
  };

  /** The upload URL of files.getUploadURLExternal: the file's bytes, raw or as a multipart form. */
  const upload = (request: FakeHttpRequest, response: ServerResponse) => {
    const entry = pending.get(request.path.split('/').pop() ?? '');
    if (!entry) return sendJson(response, 404, undefined);
    const contentType = String(request.headers['content-type'] ?? '');
    entry.bytes = contentType.startsWith('multipart/form-data') ? parseMultipart(request.bytes, contentType)[0]?.bytes : request.bytes;
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.end(`OK - ${entry.bytes?.length ?? 0}`);
    return undefined;
  };
  /** A private file: only with the bot token, as Slack hands files to apps. */
  const download = (request: FakeHttpRequest, response: ServerResponse) => {
    const id = request.path.split('/')[2] ?? '';
    const authorized = apps.some((app) => request.headers.authorization === `Bearer ${app.botToken}`);
    state.downloads.push({ id, authorized });
    const bytes = hosted.get(id);
    if (!authorized || !bytes) return sendJson(response, authorized ? 404 : 403, undefined);
    response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes.length });
    response.end(bytes);
    return undefined;
  };

  const http = await startFakeHttp((request, response: ServerResponse) => {
    if (request.path.startsWith('/upload/v1/')) return upload(request, response);
    if (request.path.startsWith('/files-pri/')) return download(request, response);
    const method = request.path.replace(/^\/api\//, '');
    const args = argumentsOf(request);
    state.calls.push({ method, args, at: Date.now() });
    if (state.outage) return sendJson(response, 503, { ok: false, error: 'service_unavailable' });
    const limited = limits.get(method);
    if (limited !== undefined) {
      limits.delete(method);
      return sendJson(response, 429, { ok: false, error: 'ratelimited' }, { 'retry-after': String(limited) });
    }
    const token = (request.headers.authorization ?? '').replace(/^Bearer\s+/i, '');
    const handler = methods[method];
    if (!handler) return sendJson(response, 200, { ok: false, error: 'unknown_method' });
    const result = handler(args, token);
    if (hangs.delete(method)) return undefined;
    return sendJson(response, 200, { ok: true, ...result });
  });
  origin = http.origin;

  const wss = new WebSocketServer({ server: http.server, path: '/link' });
  wss.on('connection', (socket, request) => {
    opened += 1;
    const appId = new URL(request.url ?? '/', 'ws://fake').searchParams.get('app') ?? FIRST_APP.appId;
    sockets.set(socket, appId);
    socket.on('close', () => sockets.delete(socket));
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as { envelope_id?: string };
      if (message.envelope_id) state.acks.push(message.envelope_id);
    });
    socket.send(JSON.stringify({ type: 'hello', num_connections: sockets.size, connection_info: { app_id: appId }, debug_info: { host: 'fake' } }));
  });

  const push = (type: string, payload: Record<string, any>, app: FakeSlackApp = apps[0] ?? FIRST_APP): string => {
    const envelopeId = randomUUID();
    const frame = JSON.stringify({ envelope_id: envelopeId, type, payload, accepts_response_payload: false, retry_attempt: 0, retry_reason: '' });
    for (const [socket, appId] of sockets) if (appId === app.appId) socket.send(frame);
    return envelopeId;
  };

  return {
    url: `${http.origin}/api/`,
    env: { SLACK_BOT_TOKEN: (apps[0] ?? FIRST_APP).botToken, SLACK_API_URL: `${http.origin}/api/` },
    ...state,
    get outage() {
      return state.outage;
    },
    set outage(value: boolean) {
      state.outage = value;
    },
    hostFile(name, bytes, mimetype) {
      const id = `F0IN${++fileCounter}`;
      hosted.set(id, bytes);
      const url = `${origin}/files-pri/${id}/download/${encodeURIComponent(name)}`;
      return { id, name, title: name, mimetype, filetype: name.split('.').pop(), size: bytes.length, mode: 'hosted', url_private: url, url_private_download: url };
    },
    socketsOpened: () => opened,
    openSockets: () => sockets.size,
    botMessages: (channel, threadTs) => state.messages.filter((m) => m.channel === channel && (threadTs === undefined || m.thread_ts === threadTs)),
    pushEvent: (payload, app) => push('events_api', payload, app),
    pushInteraction: (payload, app) => push('interactive', payload, app),
    openSocketsOf: (app) => [...sockets.values()].filter((appId) => appId === app.appId).length,
    sendDisconnect() {
      for (const socket of sockets.keys()) socket.send(JSON.stringify({ type: 'disconnect', reason: 'refresh_requested', debug_info: { host: 'fake' } }));
    },
    dropSockets() {
      for (const socket of sockets.keys()) socket.terminate();
    },
    rateLimitNext(method, seconds) {
      limits.set(method, seconds);
    },
    hangNext(method) {
      hangs.add(method);
    },
    async close() {
      for (const socket of sockets.keys()) socket.terminate();
      wss.close();
      await http.close();
    },
  };
}
