import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { apiUserId } from '@herald/core';
import type { Db } from '@herald/db';

interface CorpusMessage {
  role: 'user' | 'assistant' | 'tool';
  content: string;
  toolName?: string;
  toolCalls?: { id: string; name: string; arguments: string }[];
}

interface CorpusSession {
  key: string;
  owner: string;
  platform: string;
  chatType: string;
  /** Other people who wrote in the session (group chats). */
  writers?: string[];
  day: string;
  messages: CorpusMessage[];
}

/**
 * A fixed history in English, Chinese, Japanese and Korean for two people, alice and bob, with
 * code, tool calls, emoji and group chats. Tests name sessions by `key`. The people are the API's
 * (`alice` is stored as `api:alice`), whatever platform a session is on, so one person spans them.
 */
export const SEARCH_CORPUS: CorpusSession[] = [
  {
    key: 'a-deploy',
    owner: 'alice',
    platform: 'api',
    chatType: 'dm',
    day: '2026-01-10',
    messages: [
      { role: 'user', content: 'We are deploying the new build to staging tomorrow morning.' },
      {
        role: 'assistant',
        content: 'The deployment checklist: run the migrations first, then restart the workers.',
        toolCalls: [{ id: 'c1', name: 'terminal', arguments: '{"command":"kubectl rollout restart deploy/herald-worker"}' }],
      },
      { role: 'tool', content: 'rollout restarted', toolName: 'terminal' },
      { role: 'assistant', content: 'Done: the workers were restarted.' },
    ],
  },
  {
    key: 'a-beijing',
    owner: 'alice',
    platform: 'telegram',
    chatType: 'dm',
    day: '2026-03-02',
    messages: [
      { role: 'user', content: '我们下周去北京出差，需要订酒店。' },
      { role: 'assistant', content: '好的，我会帮你查找北京的酒店和机票。' },
    ],
  },
  {
    key: 'a-tokyo',
    owner: 'alice',
    platform: 'api',
    chatType: 'dm',
    day: '2026-04-15',
    messages: [
      { role: 'user', content: '東京タワーの夜景はとても綺麗でした。' },
      { role: 'assistant', content: '서울에서 회의가 있습니다. 준비를 도와 드릴까요?' },
    ],
  },
  {
    key: 'a-code',
    owner: 'alice',
    platform: 'api',
    chatType: 'dm',
    day: '2026-05-20',
    messages: [
      { role: 'user', content: 'The function getUserById throws when the id is null; see src/users/repository.ts.' },
      { role: 'assistant', content: '部署 deploy 到 production 环境之前先修复这个 bug。' },
    ],
  },
  {
    key: 'a-misc',
    owner: 'alice',
    platform: 'api',
    chatType: 'dm',
    day: '2026-06-01',
    messages: [
      { role: 'user', content: 'Ship it 🚀 today, to be or not to be.' },
      { role: 'assistant', content: 'Shipping now. 100% of the tests pass_through.' },
    ],
  },
  {
    key: 'b-secret',
    owner: 'bob',
    platform: 'api',
    chatType: 'dm',
    day: '2026-02-01',
    messages: [
      { role: 'user', content: 'Bob secret: deploying the payroll system on Friday.' },
      { role: 'assistant', content: '北京的天气很好，适合出差。' },
    ],
  },
  {
    key: 'g-lunch',
    owner: 'bob',
    platform: 'telegram',
    chatType: 'group',
    writers: ['alice'],
    day: '2026-02-10',
    messages: [
      { role: 'user', content: 'Team lunch at the ramen place on Thursday.' },
      { role: 'user', content: 'Count me in for ramen.' },
    ],
  },
  {
    key: 'g-budget',
    owner: 'bob',
    platform: 'telegram',
    chatType: 'group',
    day: '2026-02-11',
    messages: [{ role: 'user', content: 'Quarterly budget review in the group.' }],
  },
];

/** Inserts the corpus into profile `main`; returns session ids by key. */
export async function seedSearchCorpus(db: Db, profileId = 'main'): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  for (const session of SEARCH_CORPUS) {
    const id = randomUUID();
    ids.set(session.key, id);
    const started = new Date(`${session.day}T09:00:00Z`);
    await db
      .insertInto('sessions')
      .values({
        id,
        profile_id: profileId,
        session_key: `agent:${profileId}:${session.platform}:${session.chatType}:${session.key}`,
        platform: session.platform,
        chat_type: session.chatType,
        chat_id: session.key,
        thread_id: null,
        origin_user_id: apiUserId(session.owner),
        system_prompt: null,
        parent_session_id: null,
        created_at: started,
      })
      .execute();
    for (const writer of [session.owner, ...(session.writers ?? [])]) {
      await db
        .insertInto('inbound_events')
        .values({ id: randomUUID(), session_id: id, platform: session.platform, user_id: apiUserId(writer), text: 'hi', status: 'done' })
        .execute();
    }
    let seq = 0;
    for (const message of session.messages) {
      seq++;
      await sql`
        INSERT INTO messages (session_id, seq, role, content, tool_calls, tool_name, created_at)
        VALUES (${id}::uuid, ${seq}, ${message.role}, ${message.content},
                ${message.toolCalls === undefined ? null : JSON.stringify(message.toolCalls)}::jsonb,
                ${message.toolName ?? null}, ${new Date(started.getTime() + seq * 60_000)})`.execute(db);
    }
  }
  return ids;
}
