import type { ServerResponse } from 'node:http';
import { WebSocketServer } from 'ws';
import type { WebSocket } from 'ws';
import { sendJson, startFakeHttp } from './fake-http.ts';
import { parseMultipart } from './multipart.ts';

/**
 * A local Discord: REST (the few routes Herald uses) and a gateway WebSocket speaking hello,
 * identify, heartbeat, ready and dispatch. A real discord.js client connects to it through the
 * REST base URL (GET /gateway/bot names the gateway URL).
 */

export const BOT_ID = '111111111111111111';
export const GUILD_ID = '222222222222222222';
export const CHANNEL_ID = '333333333333333333';
export const THREAD_ID = '444444444444444444';

/** A token whose first part is the bot id in base64, as real tokens are. */
const tokenOf = (botId: string) => `${Buffer.from(botId).toString('base64')}.fake.token`;
export const DISCORD_TOKEN = tokenOf(BOT_ID);

export interface FakeDiscordMessage {
  id: string;
  channel_id: string;
  content: string;
  author: { id: string };
  nonce?: string;
  message_reference?: { message_id: string };
  /** Action rows of buttons the bot sent with the message. */
  components?: { type: 1; components: { type: 2; style: number; label: string; custom_id: string }[] }[];
  /** Files the bot attached (multipart: payload_json and files[n]), as uploaded. */
  files?: { name: string; bytes: Buffer }[];
}

export interface FakeDiscord {
  /** For DISCORD_API_BASE. */
  apiBase: string;
  /** The bot this fake is (BOT_ID unless another was asked for) and its token. */
  botId: string;
  token: string;
  /** The environment that points Herald's Discord adapter at this fake. */
  env: Record<string, string>;
  messages: FakeDiscordMessage[];
  requests: { method: string; path: string; body: any; at: number }[];
  commands: unknown[];
  identifies: number;
  /** Connected gateway sockets right now (one per shard holder). */
  connections(): number;
  /** Answer the next requests to this path prefix with 429 first. */
  rateLimitNext(pathPrefix: string, retryAfterSeconds: number): void;
  /** Resolves when a client has identified and received READY and the guild. */
  ready(): Promise<void>;
  /** A person's message arriving through the gateway. */
  userMessage(options: { channelId: string; userId: string; content: string; dm?: boolean; mentionBot?: boolean; attachments?: FakeDiscordFile[] }): string;
  /** A slash command arriving through the gateway. */
  slashCommand(options: { channelId: string; userId: string; name: string; option?: string }): string;
  /** A person presses a button under one of the bot's messages (a component interaction). */
  pressButton(options: { channelId: string; userId: string; messageId: string; customId: string; dm?: boolean }): string;
  botMessages(channelId: string): FakeDiscordMessage[];
  close(): Promise<void>;
}

/** A file a person attaches, served from the fake's CDN path (attachments/<id>/<name>). */
export interface FakeDiscordFile {
  name: string;
  bytes: Buffer;
  contentType?: string;
}

/** A REST path as the API names it: without the /api/v10 prefix, percent-decoded. */
const apiPath = (path: string) => decodeURIComponent(path.replace(/^\/api(\/v\d+)?/, ''));

let snowflake = 900000000000000000n;
const nextId = () => String(++snowflake);

const user = (id: string, bot = false) => ({ id, username: bot ? 'herald' : `user${id.slice(-4)}`, discriminator: '0', global_name: null, avatar: null, ...(bot ? { bot: true } : {}) });

/** `botId`: a second bot of its own (its own token, so its own gateway lease), for a second account. */
export async function startFakeDiscord(options: { botId?: string } = {}): Promise<FakeDiscord> {
  const botId = options.botId ?? BOT_ID;
  const clients = new Set<WebSocket>();
  const rateLimits: { prefix: string; retryAfter: number }[] = [];
  let sequence = 0;
  let readyResolve: (() => void) | undefined;
  let readyPromise = new Promise<void>((resolve) => (readyResolve = resolve));
  const dmChannels = new Set<string>();
  const cdn = new Map<string, Buffer>();

  const send = (socket: WebSocket, payload: unknown) => socket.send(JSON.stringify(payload));
  const dispatch = (t: string, d: unknown) => {
    for (const socket of clients) send(socket, { op: 0, t, s: ++sequence, d });
  };

  const guild = () => ({
    id: GUILD_ID,
    name: 'Team',
    icon: null,
    owner_id: '1',
    roles: [{ id: GUILD_ID, name: '@everyone', permissions: '0', position: 0, color: 0, hoist: false, managed: false, mentionable: false, flags: 0 }],
    emojis: [],
    stickers: [],
    features: [],
    member_count: 2,
    members: [],
    presences: [],
    voice_states: [],
    stage_instances: [],
    guild_scheduled_events: [],
    soundboard_sounds: [],
    large: false,
    unavailable: false,
    joined_at: new Date().toISOString(),
    channels: [{ id: CHANNEL_ID, type: 0, name: 'general', guild_id: GUILD_ID, position: 0, permission_overwrites: [] }],
    threads: [
      {
        id: THREAD_ID,
        type: 11,
        name: 'a thread',
        guild_id: GUILD_ID,
        parent_id: CHANNEL_ID,
        owner_id: '1',
        message_count: 0,
        member_count: 1,
        thread_metadata: { archived: false, auto_archive_duration: 60, archive_timestamp: new Date().toISOString(), locked: false },
      },
    ],
  });

  const fake: FakeDiscord = {
    apiBase: '',
    botId,
    token: tokenOf(botId),
    get env() {
      return { DISCORD_BOT_TOKEN: fake.token, DISCORD_API_BASE: fake.apiBase };
    },
    messages: [],
    get requests() {
      return http.requests.map((request) => ({ ...request, path: apiPath(request.path) }));
    },
    commands: [],
    identifies: 0,
    connections: () => clients.size,
    rateLimitNext(prefix, retryAfter) {
      rateLimits.push({ prefix, retryAfter });
    },
    ready: () => readyPromise,
    userMessage(o) {
      const id = nextId();
      if (o.dm) dmChannels.add(o.channelId);
      const message = {
        id,
        channel_id: o.channelId,
        ...(o.dm ? { channel_type: 1 } : { guild_id: GUILD_ID, channel_type: o.channelId === THREAD_ID ? 11 : 0 }),
        author: user(o.userId),
        content: o.content,
        timestamp: new Date().toISOString(),
        edited_timestamp: null,
        tts: false,
        mention_everyone: false,
        mentions: o.mentionBot ? [user(botId, true)] : [],
        mention_roles: [],
        attachments: (o.attachments ?? []).map((file) => {
          const fileId = nextId();
          cdn.set(`/attachments/${fileId}/${file.name}`, file.bytes);
          const url = `${http.origin}/attachments/${fileId}/${file.name}`;
          return { id: fileId, filename: file.name, size: file.bytes.length, url, proxy_url: url, ...(file.contentType ? { content_type: file.contentType } : {}) };
        }),
        embeds: [],
        pinned: false,
        type: 0,
      };
      fake.messages.push({ id, channel_id: o.channelId, content: o.content, author: { id: o.userId } });
      dispatch('MESSAGE_CREATE', message);
      return id;
    },
    slashCommand(o) {
      const id = nextId();
      dispatch('INTERACTION_CREATE', {
        id,
        application_id: botId,
        type: 2,
        token: `interaction-token-${id}`,
        version: 1,
        channel_id: o.channelId,
        channel: { id: o.channelId, type: 0, guild_id: GUILD_ID },
        guild_id: GUILD_ID,
        member: { user: user(o.userId), roles: [], joined_at: new Date().toISOString(), deaf: false, mute: false, flags: 0, permissions: '0' },
        app_permissions: '0',
        locale: 'en-US',
        guild_locale: 'en-US',
        entitlements: [],
        authorizing_integration_owners: {},
        context: 0,
        data: { id: nextId(), name: o.name, type: 1, ...(o.option === undefined ? {} : { options: [{ name: 'mode', type: 3, value: o.option }] }) },
      });
      return id;
    },
    pressButton(o) {
      const id = nextId();
      const pressed = fake.messages.find((m) => m.id === o.messageId);
      if (!pressed) throw new Error(`no message ${o.messageId}`);
      const message = {
        id: pressed.id,
        channel_id: o.channelId,
        author: user(botId, true),
        content: pressed.content,
        timestamp: new Date().toISOString(),
        edited_timestamp: null,
        tts: false,
        mention_everyone: false,
        mentions: [],
        mention_roles: [],
        attachments: [],
        embeds: [],
        pinned: false,
        type: 0,
        components: pressed.components ?? [],
      };
      dispatch('INTERACTION_CREATE', {
        id,
        application_id: botId,
        type: 3,
        token: `interaction-token-${id}`,
        version: 1,
        channel_id: o.channelId,
        ...(o.dm
          ? { channel: { id: o.channelId, type: 1 }, user: user(o.userId) }
          : {
              channel: { id: o.channelId, type: 0, guild_id: GUILD_ID },
              guild_id: GUILD_ID,
              member: { user: user(o.userId), roles: [], joined_at: new Date().toISOString(), deaf: false, mute: false, flags: 0, permissions: '0' },
            }),
        app_permissions: '0',
        locale: 'en-US',
        entitlements: [],
        authorizing_integration_owners: {},
        context: o.dm ? 1 : 0,
        message,
        data: { custom_id: o.customId, component_type: 2 },
      });
      return id;
    },
    botMessages(channelId) {
      return fake.messages.filter((message) => message.channel_id === channelId && message.author.id === botId);
    },
    async close() {
      for (const socket of clients) socket.terminate();
      wss.close();
      await http.close();
    },
  };

  const json = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => sendJson(response, status, body, headers);

  const http = await startFakeHttp((request, response) => {
    const file = cdn.get(request.path);
    if (request.method === 'GET' && file !== undefined) {
      response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': file.length });
      return response.end(file);
    }
    const path = apiPath(request.path);
    const body = request.body;
    const limited = rateLimits.findIndex((limit) => path.startsWith(limit.prefix));
    if (limited >= 0) {
      const [limit] = rateLimits.splice(limited, 1);
      return json(
        response,
        429,
        { message: 'You are being rate limited.', retry_after: limit!.retryAfter, global: false },
        {
          'retry-after': String(Math.ceil(limit!.retryAfter)),
          'x-ratelimit-scope': 'user',
        },
      );
    }
    // What `herald init` checks a token with: Discord answers 401 for one it does not know.
    if (request.method === 'GET' && path === '/users/@me') {
      if (request.headers.authorization !== `Bot ${fake.token}`) return json(response, 401, { message: '401: Unauthorized', code: 0 });
      return json(response, 200, user(botId, true));
    }
    if (request.method === 'GET' && path === '/gateway/bot') {
      return json(response, 200, { url: `ws://127.0.0.1:${http.port}/gateway`, shards: 1, session_start_limit: { total: 1000, remaining: 1000, reset_after: 0, max_concurrency: 1 } });
    }
    let match = /^\/channels\/(\d+)\/messages$/.exec(path);
    if (request.method === 'POST' && match) {
      const channelId = match[1]!;
      const multipart = String(request.headers['content-type'] ?? '').startsWith('multipart/form-data');
      const parts = multipart ? parseMultipart(request.bytes, String(request.headers['content-type'])) : [];
      const uploads = parts.filter((part) => part.filename !== undefined).map((part) => ({ name: part.filename!, bytes: part.bytes }));
      const payload = parts.find((part) => part.name === 'payload_json');
      const body = payload ? JSON.parse(payload.bytes.toString('utf8')) : request.body;
      const content = String(body?.content ?? '');
      if (content.length > 2000) return json(response, 400, { code: 50035, message: 'Invalid Form Body' });
      if (body?.enforce_nonce && body.nonce) {
        const existing = fake.messages.find((m) => m.author.id === botId && m.nonce === body.nonce);
        if (existing) return json(response, 200, { ...existing, author: user(botId, true) });
      }
      const message: FakeDiscordMessage = {
        id: nextId(),
        channel_id: channelId,
        content,
        author: { id: botId },
        ...(body?.nonce ? { nonce: String(body.nonce) } : {}),
        ...(body?.message_reference ? { message_reference: { message_id: String(body.message_reference.message_id) } } : {}),
        ...(Array.isArray(body?.components) ? { components: body.components } : {}),
        ...(uploads.length > 0 ? { files: uploads } : {}),
      };
      fake.messages.push(message);
      return json(response, 200, { ...message, author: user(botId, true), type: 0, timestamp: new Date().toISOString() });
    }
    if (request.method === 'POST' && /^\/channels\/\d+\/typing$/.test(path)) return json(response, 204, undefined);
    if (request.method === 'PUT' && /^\/applications\/\d+\/commands$/.test(path)) {
      fake.commands = body as unknown[];
      return json(response, 200, fake.commands);
    }
    if (request.method === 'POST' && /^\/interactions\/\d+\/[^/]+\/callback$/.test(path)) return json(response, 204, undefined);
    const own = /^\/channels\/(\d+)\/messages\/(\d+)$/.exec(path);
    if (own && (request.method === 'PATCH' || request.method === 'DELETE')) {
      const index = fake.messages.findIndex((m) => m.channel_id === own[1] && m.id === own[2]);
      const message = fake.messages[index];
      if (message === undefined) return json(response, 404, { code: 10008, message: 'Unknown Message' });
      if (request.method === 'DELETE') {
        fake.messages.splice(index, 1);
        return json(response, 204, undefined);
      }
      if (body?.content !== undefined) {
        if (String(body.content).length > 2000) return json(response, 400, { code: 50035, message: 'Invalid Form Body' });
        message.content = String(body.content);
      }
      if (Array.isArray(body?.components)) message.components = body.components;
      return json(response, 200, { ...message, author: user(botId, true), type: 0, timestamp: new Date().toISOString() });
    }
    match = /^\/webhooks\/(\d+)\/([^/]+)\/messages\/@original$/.exec(path);
    if (request.method === 'PATCH' && match) {
      const message: FakeDiscordMessage = { id: nextId(), channel_id: `interaction:${match[2]}`, content: String(body?.content ?? ''), author: { id: botId } };
      fake.messages.push(message);
      return json(response, 200, { ...message, author: user(botId, true) });
    }
    return json(response, 404, { code: 0, message: `404: ${request.method} ${path} is not faked` });
  });

  const wss = new WebSocketServer({ server: http.server, path: '/gateway' });
  wss.on('connection', (socket) => {
    clients.add(socket);
    socket.on('close', () => {
      clients.delete(socket);
      if (clients.size === 0) readyPromise = new Promise<void>((resolve) => (readyResolve = resolve));
    });
    send(socket, { op: 10, d: { heartbeat_interval: 41250 } });
    socket.on('message', (data) => {
      const payload = JSON.parse(String(data)) as { op: number; d: any };
      if (payload.op === 1) send(socket, { op: 11 });
      if (payload.op === 2) {
        fake.identifies++;
        const port = http.port;
        send(socket, {
          op: 0,
          t: 'READY',
          s: ++sequence,
          d: {
            v: 10,
            user: user(botId, true),
            guilds: [{ id: GUILD_ID, unavailable: true }],
            session_id: `session-${fake.identifies}`,
            resume_gateway_url: `ws://127.0.0.1:${port}/gateway`,
            shard: payload.d.shard ?? [0, 1],
            application: { id: botId, flags: 0 },
          },
        });
        send(socket, { op: 0, t: 'GUILD_CREATE', s: ++sequence, d: guild() });
        readyResolve?.();
      }
    });
  });

  fake.apiBase = `${http.origin}/api`;
  return fake;
}
