import { PLATFORM_FACTS } from '@herald/core';
import type { PlatformWebhook, WebhookAnswer } from '../platform-adapter.ts';
import { SlackUnavailableError } from './slack-ingress.ts';
import type { SlackEnvelopeKind, SlackIngress } from './slack-ingress.ts';
import { matchSlackSignature } from './slack-signature.ts';

const [EVENTS_PATH = '', INTERACTIONS_PATH = ''] = PLATFORM_FACTS.slack.eventRoutes;

type Headers = Readonly<Record<string, string | string[] | undefined>>;

/** One Slack app's Events API side: its ingress (its account) and the secret its requests are signed with. */
export interface SlackEventsApp {
  ingress: SlackIngress;
  signingSecret: string;
}

function refusal(status: number, code: string, message: string, field?: string): WebhookAnswer {
  return { status, body: { error: { code, message, ...(field === undefined ? {} : { field }) } } };
}

/**
 * The signature first, on the raw bytes: the request is the app's whose signing secret signed it;
 * a forged, unsigned or stale request, or one signed by no app here, is a 401 and nothing of it is
 * read or written. Then the body is parsed (JSON for events, `payload=` form for
 * interactions), and the envelope committed before the 200 (a retry, X-Slack-Retry-Num with the
 * same event, is a duplicate of the committed message and changes nothing).
 */
async function answer(apps: readonly SlackEventsApp[], kind: SlackEnvelopeKind, raw: Buffer, headers: Headers): Promise<WebhookAnswer> {
  const match = matchSlackSignature(
    apps.map((app) => app.signingSecret),
    headers,
    raw,
  );
  const ingress = match.verdict === 'ok' ? apps[match.index]?.ingress : undefined;
  if (ingress === undefined) {
    const why =
      match.verdict === 'stale'
        ? 'X-Slack-Request-Timestamp: older than five minutes'
        : 'X-Slack-Signature: missing or not signed with the signing secret of a Slack app here (SLACK_SIGNING_SECRET, signing_secret_env)';
    return refusal(401, 'unauthorized', why);
  }
  const body = kind === 'events_api' ? parseJson(raw.toString('utf8')) : parseJson(new URLSearchParams(raw.toString('utf8')).get('payload') ?? '');
  if (body === undefined)
    return refusal(400, 'invalid_request', kind === 'events_api' ? 'body: not valid JSON' : "payload: expected a form field with Slack's JSON payload", kind === 'events_api' ? 'body' : 'payload');
  const challenge = (body as { type?: unknown; challenge?: unknown }).type === 'url_verification' ? (body as { challenge?: unknown }).challenge : undefined;
  if (typeof challenge === 'string') return { status: 200, body: { challenge } };
  try {
    return { status: 200, body: { ok: true, outcome: await ingress.handle(kind, body) } };
  } catch (error) {
    if (!(error instanceof SlackUnavailableError)) throw error;
    return refusal(503, 'unavailable', 'Slack could not be reached to read this event; nothing was accepted, retry shortly');
  }
}

function parseJson(text: string): object | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * POST /v1/slack/events and POST /v1/slack/interactions for every Slack app with a signing secret
 * (SLACK_SIGNING_SECRET, and each HERALD_PLATFORMS_FILE app's signing_secret_env): one URL for all
 * of them, each request handed to the app that signed it.
 */
export function slackWebhooks(apps: readonly SlackEventsApp[]): PlatformWebhook[] {
  return [
    {
      path: EVENTS_PATH,
      summary: 'Slack Events API: checks X-Slack-Signature, answers url_verification, commits the event, answers 200',
      handle: (raw, headers) => answer(apps, 'events_api', raw, headers),
    },
    {
      path: INTERACTIONS_PATH,
      summary: 'Slack interactivity (Block Kit buttons): checks X-Slack-Signature, commits the answer, answers 200',
      handle: (raw, headers) => answer(apps, 'interactive', raw, headers),
    },
  ];
}
