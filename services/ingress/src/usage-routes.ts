import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { BudgetDefaults } from '@herald/core';
import type { Db } from '@herald/db';
import { listScope } from '@herald/people';
import type { Principal } from '@herald/people';
import { profileNameSchema } from '@herald/profiles';
import { principalOfRequest } from './api-auth.ts';
import { listBudgets, removeBudget, setBudget, USAGE_GROUPS, usageReport, utcDayStart } from '@herald/limits';
import type { BudgetRow, UsageGroup } from '@herald/limits';
import { sendError } from './api-errors.ts';
import { firstIssue } from './message-body.ts';
import { withContract } from './contracts/route-contract.ts';
import { noContent } from './contracts/common.ts';
import { budgetList, budgetView, usageReportView } from './contracts/usage-views.ts';

const DAY_MS = 86_400_000;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const GROUP_HINT = `expected ${USAGE_GROUPS.join(', ')}, or several separated by commas`;

/** A day (YYYY-MM-DD, UTC) or an ISO 8601 time; `to` as a day means through the end of that day. */
function bound(end: boolean) {
  const hint = 'expected a day (YYYY-MM-DD) or a time (ISO 8601, e.g. 2026-12-06T10:00:00Z)';
  return z
    .string()
    .refine((value) => (DATE.test(value) ? !Number.isNaN(Date.parse(`${value}T00:00:00Z`)) : z.iso.datetime({ offset: true }).safeParse(value).success), { error: hint })
    .transform((value) => (DATE.test(value) ? new Date(Date.parse(`${value}T00:00:00Z`) + (end ? DAY_MS : 0)) : new Date(value)))
    .optional();
}

const groupList = z
  .union([z.string(), z.array(z.string())])
  .default('day')
  .transform((value) =>
    (Array.isArray(value) ? value : [value])
      .flatMap((part) => part.split(','))
      .map((part) => part.trim())
      .filter((part) => part !== ''),
  )
  .refine((groups): groups is UsageGroup[] => groups.length > 0 && groups.every((group) => (USAGE_GROUPS as readonly string[]).includes(group)), { error: GROUP_HINT });

/** An empty parameter (`from=&to=`) is the same as none: the default applies. */
const emptyIsUnset = (value: unknown) => (value === '' ? undefined : value);

const usageQuery = z.strictObject({
  group_by: z.preprocess(emptyIsUnset, groupList),
  from: z.preprocess(emptyIsUnset, bound(false)),
  to: z.preprocess(emptyIsUnset, bound(true)),
});

const budgetParams = z.object({ scope: z.string(), subject: z.string() });
const dollars = z.number({ error: 'expected an amount in US dollars, or null for the default' }).finite().min(0, { error: 'expected 0 (off) or more' }).max(1_000_000_000).nullable();
const budgetBody = z.strictObject({ per_day: dollars.optional(), per_month: dollars.optional() });
/** A person key (herald_usage_person's, such as `api:ana`): printable, no spaces. */
const personKey = z.string().regex(/^[^\s\p{Cc}]{1,200}$/u, { error: 'expected a person key such as api:ana' });

/** The first problem, naming the field; an unknown parameter or body field is named itself. */
function problemOf(error: z.ZodError): { field: string; message: string } {
  const issue = error.issues[0];
  if (issue?.code === 'unrecognized_keys' && issue.keys[0] !== undefined) return { field: issue.keys[0], message: `${issue.keys[0]}: is not a known field` };
  return firstIssue(error);
}

function budgetJson(row: BudgetRow) {
  return { scope: row.scope, subject: row.subject, per_day: row.perDayUsd, per_month: row.perMonthUsd, updated_at: row.updatedAt.toISOString() };
}

/**
 * What of the usage the caller may see: everything, the profiles their grants cover, or only their
 * own calls (a member; the route guard refused a role that may see none).
 */
function usageScopeOf(principal: Principal): { person?: string; profiles?: readonly string[] } {
  const scope = listScope(principal, 'read');
  if (!scope || scope.kind === 'all') return {};
  if (scope.kind === 'profiles') return { profiles: scope.profiles };
  return { person: scope.ownerKey, ...(scope.profiles === 'all' ? {} : { profiles: scope.profiles }) };
}

/** The request's range: [from, to), by default the last 30 UTC days through today. */
function rangeOf(query: { from?: Date | undefined; to?: Date | undefined }): { from: Date; to: Date } {
  const to = query.to ?? new Date(utcDayStart(new Date()).getTime() + DAY_MS);
  return { from: query.from ?? new Date(to.getTime() - 30 * DAY_MS), to };
}

function registerUsageReport(app: FastifyInstance, db: Db): void {
  const contract = { summary: 'Model tokens and cost, grouped by person, profile, model or day', tags: ['usage'], querystring: usageQuery, response: { 200: usageReportView } };
  app.get('/v1/usage', withContract(contract), async (request, reply) => {
    const parsed = usageQuery.safeParse(request.query ?? {});
    if (!parsed.success) {
      const issue = problemOf(parsed.error);
      return sendError(reply, 400, 'invalid_request', issue.message, issue.field);
    }
    const { from, to } = rangeOf(parsed.data);
    if (from.getTime() >= to.getTime()) return sendError(reply, 400, 'invalid_request', 'to: expected a time after from', 'to');
    const groupBy = [...new Set(parsed.data.group_by)];
    const report = await usageReport(db, { groupBy, from, to, ...usageScopeOf(principalOfRequest(request)) });
    return { group_by: groupBy, from: from.toISOString(), to: to.toISOString(), currency: 'USD' as const, rows: report.rows, total: report.total };
  });
}

/** Checks a budget's path: the scope, and a subject of its kind; a message naming the field, or the pair. */
function budgetTarget(params: { scope: string; subject: string }): { scope: 'person' | 'profile'; subject: string } | { field: string; message: string } {
  if (params.scope !== 'person' && params.scope !== 'profile') return { field: 'scope', message: 'scope: expected person or profile' };
  const subject = (params.scope === 'person' ? personKey : profileNameSchema).safeParse(params.subject);
  if (!subject.success) return { field: 'subject', message: `subject: ${subject.error.issues[0]?.message ?? 'is invalid'}` };
  return { scope: params.scope, subject: params.subject };
}

function registerBudgets(app: FastifyInstance, db: Db, defaults: BudgetDefaults): void {
  app.get('/v1/budgets', withContract({ summary: "The money budgets: the defaults and each person's or profile's own", tags: ['usage'], response: { 200: budgetList } }), async () => ({
    defaults: { person_day: defaults.personDay, person_month: defaults.personMonth, profile_day: defaults.profileDay, profile_month: defaults.profileMonth },
    budgets: (await listBudgets(db)).map(budgetJson),
  }));

  const put = {
    summary: "Set a person's or a profile's budgets per day and month (US dollars; null: the default; 0: off)",
    tags: ['usage'],
    params: budgetParams,
    body: budgetBody,
    response: { 200: budgetView },
  };
  app.put<{ Params: { scope: string; subject: string } }>('/v1/budgets/:scope/:subject', withContract(put), async (request, reply) => {
    const target = budgetTarget(request.params);
    if ('field' in target) return sendError(reply, 400, 'invalid_request', target.message, target.field);
    const body = budgetBody.safeParse(request.body ?? {});
    if (!body.success) {
      const issue = problemOf(body.error);
      return sendError(reply, 400, 'invalid_request', issue.message, issue.field);
    }
    return budgetJson(await setBudget(db, target.scope, target.subject, body.data.per_day ?? null, body.data.per_month ?? null));
  });

  const remove = { summary: "Remove a person's or a profile's own budgets (the defaults apply again)", tags: ['usage'], params: budgetParams, response: { 204: noContent } };
  app.delete<{ Params: { scope: string; subject: string } }>('/v1/budgets/:scope/:subject', withContract(remove), async (request, reply) => {
    const target = budgetTarget(request.params);
    if ('field' in target) return sendError(reply, 400, 'invalid_request', target.message, target.field);
    if (!(await removeBudget(db, target.scope, target.subject))) return sendError(reply, 404, 'not_found', 'no budget of its own for this person or profile');
    return reply.code(204).send();
  });
}

/** Usage and cost of the model calls, and the money budgets (docs/api.md#usage). */
export function registerUsageRoutes(app: FastifyInstance, db: Db, defaults: BudgetDefaults): void {
  registerUsageReport(app, db);
  registerBudgets(app, db, defaults);
}
