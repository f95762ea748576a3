// Exfiltration instructions (issue 39, point 4): text that tells the model to send what people say
// or their secrets to somewhere outside, or to ask people for their passwords or keys. Kept apart
// from the injection rules (injection-scan.ts) so each set can change without the other; both run
// on every text that may enter a prompt: memory, context documents, skill descriptions and bodies.

const SEND = '(send|post|upload|forward|submit|transmit|relay|report|copy|mirror|beam|ship|pipe|exfiltrate|leak|email|mail|deliver)';
/** What people said or hold: their words, the conversation, anything they typed. */
const DATA =
  '(message|messages|conversation|conversations|chat|chats|prompt|prompts|question|questions|input|inputs|request|requests|answer|answers|reply|replies|history|transcript|what (they|the user|users|people) (say|said|wrote|write|type|typed)|data|details|everything|passwords?|secrets?|credentials?|api keys?|keys|tokens?)';
/** A destination outside: a URL, an address, an endpoint, a webhook. */
const OUTSIDE =
  '(https? [a-z0-9]|www [a-z0-9]|[a-z0-9-]+ (com|net|org|io|xyz|ru|cn|info|biz|top|site|online|app|dev)\\b|webhook|endpoint|server|url|address|collector|external|remote|attacker|third party|my site|this site)';
/** Asking a person for what they must never type into a chat. */
const ASK = '(ask|request|prompt|get|obtain|collect|gather|require|demand|have) (the )?(user|users|person|people|them|everyone|anyone|the human|the customer|customers)';
const SECRET =
  '(passwords?|passphrases?|passcodes?|pins?|api keys?|private keys?|ssh keys?|secret keys?|access keys?|tokens?|credentials?|secrets?|2fa codes?|otp|one time codes?|recovery codes?|seed phrases?|credit card( numbers?)?)';

/** Added to the scanner's rules (injection-scan.ts), read in the text's prose. */
export const EXFILTRATION_RULES: readonly { reason: string; pattern: RegExp }[] = [
  { reason: 'data exfiltration', pattern: new RegExp(`\\b${SEND}\\b(?: \\w+){0,8}? ${DATA}\\b(?: \\w+){0,8}? (to|into|at|via|through) (?:\\w+ ){0,3}?${OUTSIDE}`) },
  { reason: 'credential request', pattern: new RegExp(`\\b${ASK}\\b(?: \\w+){0,4}? (for )?(?:\\w+ ){0,3}?${SECRET}\\b`) },
];
