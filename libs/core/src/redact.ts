/**
 * Secrets found by their shape, wherever they are in a text: a log line's JSON, an error message
 * kept as a dead letter's reason. Field-name redaction (pino's `redact` paths) misses a token inside
 * a nested error's message or request URL, e.g. grammy's `https://api.telegram.org/bot<TOKEN>/getMe`,
 * so the logger runs every line through this too.
 */
const SECRET_SHAPES: ReadonlyArray<readonly [RegExp, string]> = [
  // A Telegram bot token, in a Bot API URL or alone: keep the bot's id, drop the secret half.
  [/\b(bot)?(\d{5,}):[A-Za-z0-9_-]{30,}/g, '$1$2:[redacted]'],
  // The password of a URL's user info: postgres://herald:secret@db/herald.
  [/\b([a-z][a-z0-9+.-]*:\/\/[^/\s:@"'\\]*):[^@/\s"'\\]+@/gi, '$1:[redacted]@'],
  // Credentials given in a header value: Bearer and Basic schemes, Discord's `Bot <token>`.
  [/\b(Bearer|Basic|Bot)\s+[A-Za-z0-9._~+/=-]{8,}/g, '$1 [redacted]'],
  // Headers that carry a credential, as JSON keys at any depth (headers objects of HTTP errors).
  [/"(authorization|proxy-authorization|cookie|set-cookie|x-api-key|api-key|x-telegram-bot-api-secret-token)":"(?:[^"\\]|\\.)*"/gi, '"$1":"[redacted]"'],
];

/** The text with every token, URL password and credential header it holds replaced by [redacted]. */
export function redactSecrets(text: string): string {
  let out = text;
  for (const [shape, replacement] of SECRET_SHAPES) out = out.replace(shape, replacement);
  return out;
}
