import type { FastifyReply, FastifyRequest } from 'fastify';
import { apiUserId } from '@herald/core';
import type { Db, ProfileCache } from '@herald/db';
import { getCronJob } from '@herald/cron';
import { memoryEntryOwner } from '@herald/knowledge';
import { getToken, listScope, mayAct, mayUse, personKeyOf } from '@herald/people';
import type { Need, Principal, ResourceOwner } from '@herald/people';
import { chatSessionId, sessionResourceOwner } from '@herald/session';
import type { RouteAddress } from '@herald/session';
import { sendError } from './api-errors.ts';
import type { ResourceKind, RoutePermission } from './route-permissions.ts';

export interface GuardContext {
  db: Db;
  /** Where resolved person keys are kept (personKeyOf); read from Postgres without it. */
  profiles?: ProfileCache | undefined;
  request: FastifyRequest;
  reply: FastifyReply;
  permission: RoutePermission;
  principal: Principal;
}

type Fields = Record<string, unknown>;
type Guard = (context: GuardContext, need: Need) => Promise<FastifyReply | undefined>;

const fields = (value: unknown): Fields => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Fields) : {});
const text = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined);
const isGlobalAdmin = (principal: Principal) => mayAct(principal, 'admin', {});

/** Not theirs, or not there: the same 404, so an id is never confirmed to someone who may not see it. */
const notFound = (reply: FastifyReply, what: string) => sendError(reply, 404, 'not_found', `no such ${what}`);

/** The person key a user id names (a linked identity is its person's key), as stored everywhere. */
async function keyOf(context: Pick<GuardContext, 'db' | 'profiles'>, userId: string): Promise<string> {
  return personKeyOf(context.db, apiUserId(userId), context.profiles);
}

/** Replaces a user id the bootstrap token names by its person's key, only when it is linked: otherwise the route sees what was sent. */
async function resolveField(context: GuardContext, record: Fields, field: string): Promise<void> {
  const given = text(record[field]);
  if (given === undefined) return;
  const key = await keyOf(context, given);
  if (key !== apiUserId(given)) record[field] = key;
}

/** The one ownership rule: a thing that does not exist is the handler's to answer; one that does, the principal's grants or ownership decide. */
const mayActOn = (principal: Principal, need: Need, owner: ResourceOwner | undefined): boolean => owner === undefined || mayAct(principal, need, owner);

/** A resource the principal may not act on is a 404; one that does not exist is left to the handler's own answer. */
async function resourceGuard(context: GuardContext, need: Need, what: string, owner: ResourceOwner | undefined): Promise<FastifyReply | undefined> {
  if (mayActOn(context.principal, need, owner)) return undefined;
  return notFound(context.reply, what);
}

/**
 * Why the principal may not post into a chat, or undefined when they may. The profile is the one the
 * message goes to: bindings may pick another than the guard's default (main), so the chat grant is
 * checked on it here. A message joins the chat's current session, its history then in the model's
 * context, so that session is decided as the session routes decide it (write-own: its starter, or
 * an operator or admin of its profile). A chat nobody has used is free to take; a grant on the whole
 * profile (the bootstrap token's) needs no look-up.
 */
export async function chatRefusal(db: Db, principal: Principal, address: RouteAddress): Promise<'profile' | 'chat_id' | undefined> {
  if (!mayAct(principal, 'chat', { profileId: address.profileId, ownerKey: principal.key })) return 'profile';
  if (!ownChatsOnly(principal, address.profileId)) return undefined;
  const sessionId = await chatSessionId(db, address);
  return sessionId === undefined || mayActOn(principal, 'write-own', await sessionResourceOwner(db, 'session', sessionId)) ? undefined : 'chat_id';
}

/**
 * Whether the caller may post only into chats they started on this profile: checked again where the
 * message is committed (InboundMessage.ownChat), since a chat started by another at the same moment
 * is not there yet when chatRefusal looks.
 */
export function ownChatsOnly(principal: Principal, profileId: string): boolean {
  return !mayAct(principal, 'write-own', { profileId });
}

const sessionThing =
  (kind: 'session' | 'wait' | 'event' | 'run'): Guard =>
  async (context, need) => {
    const id = text(fields(context.request.params).id) ?? '';
    return resourceGuard(context, need, kind, await sessionResourceOwner(context.db, kind, id));
  };

/**
 * A list narrowed to what the caller may see: the profile (given, or the only one they may see)
 * and, for a member, their own user id in place of any other. A user id another caller names is
 * resolved to its person's key.
 */
async function narrowList(context: GuardContext, need: Need, defaultProfile?: string): Promise<FastifyReply | undefined> {
  const scope = listScope(context.principal, need);
  if (!scope) return sendError(context.reply, 403, 'forbidden', `your role does not allow this route (it needs ${need})`);
  const query = fields(context.request.query);
  const profiles = scope.kind === 'all' ? 'all' : scope.profiles;
  const profile = text(query.profile) ?? defaultProfile;
  if (profiles !== 'all') {
    if (profile !== undefined && !profiles.includes(profile)) return notFound(context.reply, 'profile');
    if (profile === undefined) {
      if (profiles.length !== 1 || profiles[0] === undefined) return sendError(context.reply, 400, 'invalid_request', `profile: required: you may see ${profiles.join(', ')}`, 'profile');
      query.profile = profiles[0];
    }
  }
  if (scope.kind === 'own') query.user_id = scope.ownerKey;
  else await resolveField(context, query, 'user_id');
  return undefined;
}

/** A body sent as the caller: a person always speaks as their key; the bootstrap token names anyone. */
async function asCaller(context: GuardContext, need: Need, profileField: string, userField: string, defaultProfile: string): Promise<FastifyReply | undefined> {
  const body = context.request.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const record = body as Fields;
  const profileId = text(record[profileField]) ?? defaultProfile;
  if (context.principal.kind === 'person') record[userField] = context.principal.key;
  else await resolveField(context, record, userField);
  const ownerKey = typeof record[userField] === 'string' ? apiUserId(record[userField]) : undefined;
  if (mayAct(context.principal, need, { profileId, ownerKey })) return undefined;
  return notFound(context.reply, 'profile');
}

const GUARDS: Readonly<Record<ResourceKind, Guard>> = {
  none: async (context, need) => {
    if (need === 'signed-in' || mayAct(context.principal, need, {})) return undefined;
    return sendError(context.reply, 403, 'forbidden', `this route needs a ${need === 'admin' ? 'admin' : 'operator'} grant on every profile`);
  },
  profile: async (context, need) => {
    const profileId = text(fields(context.request.params).profile);
    return mayAct(context.principal, need, { profileId }) ? undefined : notFound(context.reply, 'profile');
  },
  session: sessionThing('session'),
  wait: sessionThing('wait'),
  event: sessionThing('event'),
  run: sessionThing('run'),
  'cron-job': async (context, need) => {
    const job = await getCronJob(context.db, text(fields(context.request.params).id) ?? '');
    return resourceGuard(context, need, 'cron job', job && { profileId: job.profileId, ownerKey: job.creatorUserId });
  },
  'memory-entry': async (context, need) => {
    const params = fields(context.request.params);
    const profileId = text(params.profile);
    const owner = await memoryEntryOwner(context.db, profileId ?? '', text(params.entry) ?? '');
    if (owner === undefined) return mayAct(context.principal, 'read', { profileId }) || mayAct(context.principal, 'chat', { profileId }) ? undefined : notFound(context.reply, 'profile');
    return resourceGuard(context, need, 'memory entry', { profileId, ownerKey: owner === '' ? null : owner });
  },
  'user-memory': async (context, need) => {
    const params = fields(context.request.params);
    const ownerKey = await keyOf(context, text(params.user) ?? '');
    params.user = ownerKey;
    return mayAct(context.principal, need, { profileId: text(params.profile), ownerKey }) ? undefined : notFound(context.reply, 'person');
  },
  'profile-memory': async (context, need) => {
    const profileId = text(fields(context.request.params).profile);
    const query = fields(context.request.query);
    if (text(query.user_id) === undefined) {
      // The profile's shared notes are in every member's prompt already.
      return mayAct(context.principal, 'read', { profileId }) || mayAct(context.principal, 'chat', { profileId }) ? undefined : notFound(context.reply, 'profile');
    }
    const ownerKey = await keyOf(context, String(query.user_id));
    query.user_id = ownerKey;
    return mayAct(context.principal, need, { profileId, ownerKey }) ? undefined : notFound(context.reply, 'person');
  },
  'session-list': (context, need) => narrowList(context, need),
  'cron-list': (context, need) => narrowList(context, need),
  search: (context, need) => narrowList(context, need, 'main'),
  'review-list': (context, need) => narrowList(context, need),
  // The handler narrows the report itself (usageScopeOf): here only whether the role may see any usage.
  usage: async (context, need) => (listScope(context.principal, need) ? undefined : sendError(context.reply, 403, 'forbidden', `your role does not allow this route (it needs ${need})`)),
  'run-list': async (context, need) => {
    const scope = listScope(context.principal, need);
    if (scope?.kind === 'all') return undefined;
    const sessionId = text(fields(context.request.query).session_id);
    if (sessionId === undefined) return sendError(context.reply, 400, 'invalid_request', 'session_id: required: your role lists the runs of one session at a time', 'session_id');
    return resourceGuard(context, need, 'session', await sessionResourceOwner(context.db, 'session', sessionId));
  },
  message: (context, need) => asCaller(context, need, 'profile', 'user_id', 'main'),
  // The body's `user` keys the front end's chat and is left as sent: the route scopes a person's
  // chats to them and has them speak as their key (openai-compat-routes.ts speakerOf).
  completion: async (context, need) => {
    const profileId = text(fields(context.request.body).model) ?? 'main';
    return mayAct(context.principal, need, { profileId, ownerKey: context.principal.key }) ? undefined : notFound(context.reply, 'profile');
  },
  'cron-create': (context, need) => asCaller(context, need, 'profile', 'user_id', 'main'),
  person: async (context) => {
    const id = text(fields(context.request.params).id);
    return id === context.principal.personId || isGlobalAdmin(context.principal) ? undefined : notFound(context.reply, 'person');
  },
  token: async (context) => {
    const token = await getToken(context.db, text(fields(context.request.params).id) ?? '');
    if (!token || token.personId === context.principal.personId || isGlobalAdmin(context.principal)) return undefined;
    return notFound(context.reply, 'token');
  },
  'token-create': async (context) => {
    const body = context.request.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
    const record = body as Fields;
    if (record.person_id === undefined && context.principal.personId !== null) record.person_id = context.principal.personId;
    if (record.person_id === context.principal.personId || isGlobalAdmin(context.principal)) return undefined;
    return sendError(context.reply, 403, 'forbidden', 'person_id: only an admin creates tokens for someone else', 'person_id');
  },
};

/** The route's decision for this caller: 403 when their roles never allow it, 404 when the thing is not theirs. */
export async function guardRoute(context: GuardContext): Promise<FastifyReply | undefined> {
  const { need, resource } = context.permission;
  if (need === 'public') return undefined;
  // Signed in is signed in: a person without a role still sees themself and their tokens.
  if (need !== 'signed-in' && !mayUse(context.principal, need)) return sendError(context.reply, 403, 'forbidden', `your role does not allow this route (it needs ${need})`);
  return GUARDS[resource](context, need);
}
