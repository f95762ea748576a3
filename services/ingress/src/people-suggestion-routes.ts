import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { suggestPeople } from '@herald/inbox';
import type { Db } from '@herald/db';
import { sendInvalid } from './api-errors.ts';
import { withContract } from './contracts/route-contract.ts';
import { personSuggestions } from './contracts/people-views.ts';

const suggestionsQuery = z.object({
  q: z.string().max(256).default(''),
  limit: z.coerce.number({ error: 'expected a number' }).int().min(1).max(50).default(10),
});

/**
 * `GET /v1/people/suggestions`: who a field asking for a person may mean, by id or name, from the
 * people Herald has heard from. The one source of the console's suggestions, so that a people
 * directory can answer here instead without the console changing.
 */
export function registerPeopleSuggestionRoutes(app: FastifyInstance, db: Db): void {
  const contract = { summary: 'People Herald knows whose id or name contains q, for suggestions', tags: ['people'], querystring: suggestionsQuery, response: { 200: personSuggestions } };
  app.get('/v1/people/suggestions', withContract(contract), async (request, reply) => {
    const query = suggestionsQuery.safeParse(request.query ?? {});
    if (!query.success) return sendInvalid(reply, query.error);
    const people = await suggestPeople(db, query.data.q, query.data.limit);
    return { people: people.map((person) => ({ user_id: person.userId, name: person.name, last_seen_at: person.lastSeenAt.toISOString() })) };
  });
}
