import type { Need } from '@herald/people';

/**
 * What a route's answer depends on besides the role: the resource its path, query or body names,
 * whose profile and owner the decision reads (route-guard.ts resolves each kind).
 * - none: nothing beyond the role (cluster-wide routes need a grant on every profile);
 * - profile: `:profile`; session, wait, event, run, cron-job: `:id` of that thing;
 * - memory-entry: `:profile` + `:entry`; user-memory: `:profile` + `:user`; profile-memory: `:profile` + `?user_id`;
 * - session-list, search, cron-list, run-list, review-list: a list narrowed to what the caller may see;
 * - usage: a report the handler narrows to what the caller may see (their own calls, or their profiles');
 * - message, completion, cron-create: a body that names a profile, sent as the caller;
 * - person, token: `:id` of a person or token (their own, or an admin); token-create: body `person_id`.
 */
export type ResourceKind =
  | 'none'
  | 'profile'
  | 'session'
  | 'wait'
  | 'event'
  | 'run'
  | 'cron-job'
  | 'memory-entry'
  | 'user-memory'
  | 'profile-memory'
  | 'session-list'
  | 'search'
  | 'cron-list'
  | 'run-list'
  | 'review-list'
  | 'usage'
  | 'message'
  | 'completion'
  | 'cron-create'
  | 'person'
  | 'token'
  | 'token-create';

export interface RoutePermission {
  need: Need | 'public';
  resource: ResourceKind;
}

const p = (need: Need | 'public', resource: ResourceKind = 'none'): RoutePermission => ({ need, resource });

/**
 * Every route the server registers, `METHOD pattern`, and what it requires (HEAD is its GET); the
 * platforms' webhooks are public through PUBLIC_ROUTES (api-auth.ts), which checks their own secrets.
 * Deny by default: a route missing here fails the server's start (installAuth's onRoute check),
 * so no route can be added without a decision. docs/security.md shows this table by role; the
 * matrix test (test/security/people-route-matrix.test.ts) walks every route with each role.
 */
export const ROUTE_PERMISSIONS: Readonly<Record<string, RoutePermission>> = {
  'GET /healthz': p('public'),
  'GET /readyz': p('public'),
  'GET /metrics': p('public'),
  'GET /ui': p('public'),
  'GET /ui/*': p('public'),
  'GET /v1/auth/methods': p('public'),
  'POST /v1/auth/sign-in': p('public'),
  'GET /v1/auth/oidc/login': p('public'),
  'GET /v1/auth/oidc/callback': p('public'),
  'GET /v1/auth/session': p('signed-in'),
  'DELETE /v1/auth/session': p('signed-in'),
  'GET /v1/openapi.json': p('signed-in'),
  'GET /v1/models': p('signed-in'),

  'POST /v1/messages': p('chat', 'message'),
  'POST /v1/chat/completions': p('chat', 'completion'),
  'GET /v1/events/:id': p('read', 'event'),
  'GET /v1/events/:id/stream': p('read', 'event'),

  'GET /v1/sessions': p('read', 'session-list'),
  'GET /v1/sessions/:id': p('read', 'session'),
  'PATCH /v1/sessions/:id': p('write-own', 'session'),
  'GET /v1/sessions/:id/lineage': p('read', 'session'),
  'GET /v1/sessions/:id/messages': p('read', 'session'),
  'GET /v1/sessions/:id/deliveries': p('read', 'session'),
  'GET /v1/sessions/:id/attachments/:sha256': p('read', 'session'),
  'GET /v1/sessions/:id/waits': p('read', 'session'),
  'GET /v1/sessions/:id/handoff': p('read', 'session'),
  'GET /v1/sessions/:id/open-events': p('read', 'session'),
  'POST /v1/sessions/:id/handoff': p('write-own', 'session'),
  'GET /v1/search': p('read', 'search'),

  'GET /v1/waits/:id': p('read', 'wait'),
  'POST /v1/waits/:id': p('write-own', 'wait'),

  'GET /v1/runs': p('read', 'run-list'),
  'GET /v1/runs/:id': p('read', 'run'),
  'POST /v1/runs/:id/cancel': p('write-own', 'run'),

  'GET /v1/cron/jobs': p('read', 'cron-list'),
  'GET /v1/cron/preview': p('signed-in'),
  'POST /v1/cron/jobs': p('write-own', 'cron-create'),
  'GET /v1/cron/jobs/:id': p('read', 'cron-job'),
  'PATCH /v1/cron/jobs/:id': p('write-own', 'cron-job'),
  'DELETE /v1/cron/jobs/:id': p('write-own', 'cron-job'),
  'POST /v1/cron/jobs/:id/run': p('write-own', 'cron-job'),
  'GET /v1/cron/jobs/:id/runs': p('read', 'cron-job'),

  'GET /v1/profiles': p('signed-in'),
  'POST /v1/profiles': p('admin'),
  'GET /v1/profiles/:profile': p('read', 'profile'),
  'PATCH /v1/profiles/:profile': p('admin', 'profile'),
  'DELETE /v1/profiles/:profile': p('admin', 'profile'),
  'PUT /v1/profiles/:profile/documents/:name': p('admin', 'profile'),
  'DELETE /v1/profiles/:profile/documents/:name': p('admin', 'profile'),
  'GET /v1/profiles/:profile/memory': p('read', 'profile-memory'),
  'GET /v1/profiles/:profile/users/:user/memory': p('read', 'user-memory'),
  'DELETE /v1/profiles/:profile/memory/:entry': p('write-own', 'memory-entry'),
  'GET /v1/profiles/:profile/skills': p('read', 'profile'),
  'GET /v1/profiles/:profile/skills/:name': p('read', 'profile'),
  'GET /v1/profiles/:profile/skills/_export': p('read', 'profile'),
  'PUT /v1/profiles/:profile/skills/:name/pin': p('admin', 'profile'),
  'PUT /v1/profiles/:profile/skills/:name/share': p('admin', 'profile'),
  'POST /v1/profiles/:profile/skills/_import': p('admin', 'profile'),
  'GET /v1/profiles/:profile/hooks': p('admin', 'profile'),
  'PUT /v1/profiles/:profile/hooks': p('admin', 'profile'),
  'GET /v1/profiles/:profile/mcp': p('admin', 'profile'),
  'PUT /v1/profiles/:profile/mcp': p('admin', 'profile'),

  'GET /v1/reviews': p('operate', 'review-list'),
  'GET /v1/reviews/:id': p('operate'),
  'GET /v1/admin/status': p('operate'),
  'GET /v1/admin/jobs': p('operate'),
  'GET /v1/admin/dead-letters': p('operate'),
  'POST /v1/admin/dead-letters/deliveries/:id/retry': p('operate'),
  'DELETE /v1/admin/dead-letters/deliveries/:id': p('operate'),
  'DELETE /v1/admin/dead-letters/jobs/:id': p('operate'),
  'GET /v1/audit': p('admin'),
  'GET /v1/usage': p('read', 'usage'),
  'GET /v1/budgets': p('admin'),
  'PUT /v1/budgets/:scope/:subject': p('admin'),
  'DELETE /v1/budgets/:scope/:subject': p('admin'),

  'GET /v1/bindings': p('read'),
  'PUT /v1/bindings': p('admin'),
  'GET /v1/people': p('admin'),
  'GET /v1/people/suggestions': p('read'),
  'POST /v1/people': p('admin'),
  'GET /v1/people/:id': p('signed-in', 'person'),
  'PATCH /v1/people/:id': p('admin'),
  'DELETE /v1/people/:id': p('admin'),
  'POST /v1/people/:id/link-code': p('signed-in', 'person'),
  'POST /v1/tokens': p('signed-in', 'token-create'),
  'DELETE /v1/tokens/:id': p('signed-in', 'token'),
};

/** Bull Board's pages and API: every route under it is the admin's. */
export const ADMIN_VIEW_PATH = '/admin/queues';

/** The permission of a registered route; undefined when it has none (which the server refuses at start). */
export function routePermission(method: string, pattern: string): RoutePermission | undefined {
  if (pattern === ADMIN_VIEW_PATH || pattern.startsWith(`${ADMIN_VIEW_PATH}/`)) return p('admin');
  return ROUTE_PERMISSIONS[`${method === 'HEAD' ? 'GET' : method} ${pattern}`];
}
