// Slack's public names, reached as @herald/platforms/slack (the package's entry names no platform:
// test/platform-names.test.ts); the rest of Herald reaches it through PLATFORM_ADAPTERS.
export { slackAdapter } from './slack-adapter.ts';
export type { SlackInbound } from './slack-adapter.ts';
export { SlackIngress } from './slack-ingress.ts';
export type { SlackEnvelopeKind, SlackOutcome } from './slack-ingress.ts';
export { slackWebhooks } from './slack-webhooks.ts';
export type { SlackEventsApp } from './slack-webhooks.ts';
export { SlackSender, SLACK_LIMIT, WORKING_REACTION, classifySlackError, slackWebClient } from './slack-sender.ts';
export { markdownToSlackMrkdwn, slackTextToPlain } from './slack-format.ts';
export { matchSlackSignature, signSlackBody, verifySlackSignature } from './slack-signature.ts';
export { SlackRateGate, SLACK_METHOD_SPACING } from './slack-rate-gate.ts';
