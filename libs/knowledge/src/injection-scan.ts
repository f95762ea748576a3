// Text that ends up in a system prompt is scanned first: memory entries, user profiles and context
// documents are written by models and people, and an entry that tells the model to ignore its rules
// would otherwise be obeyed in every later session.

const INVISIBLE = /[\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF\u{E0000}-\u{E007F}]/u;

const RULES: { reason: string; pattern: RegExp }[] = [
  {
    reason: 'instruction override',
    pattern: /\b(ignore|disregard|forget|override)\b[^.\n]{0,40}\b(previous|prior|above|all|any|earlier|system|your)\b[^.\n]{0,40}\b(instructions?|rules?|prompts?|guidelines?|directives?)\b/i,
  },
  { reason: 'role hijack', pattern: /\byou are now\b|\bnew (system )?instructions?\s*:|\bact as (the )?system\b|<\/?system>|\[\/?(system|inst)\]/i },
  {
    reason: 'secret exfiltration',
    pattern: /\b(send|post|upload|exfiltrate|forward|leak|reveal|print|share)\b[^.\n]{0,60}\b(api[ _-]?keys?|passwords?|secrets?|tokens?|credentials?|private keys?|\.env|env(ironment)? variables?)\b/i,
  },
  { reason: 'remote code execution', pattern: /\b(curl|wget)\b[^\n|]{0,200}\|\s*(ba|z|da)?sh\b|base64\s+(-d|--decode)[^\n|]{0,100}\|\s*(ba|z)?sh\b/i },
  { reason: 'hidden instruction', pattern: /<!--[\s\S]*?(instruction|ignore|system|assistant)[\s\S]*?-->/i },
  { reason: 'prompt disclosure', pattern: /\b(reveal|print|repeat|output)\b[^.\n]{0,30}\b(system prompt|your instructions|hidden prompt)\b/i },
];

/** Returns why the text looks like prompt injection or promptware, or undefined when it looks clean. */
export function scanForInjection(text: string): string | undefined {
  if (INVISIBLE.test(text)) return 'invisible characters';
  for (const rule of RULES) if (rule.pattern.test(text)) return rule.reason;
  return undefined;
}

/** The text as it may enter a prompt: itself, or a marker naming why it was held back. */
export function promptSafe(text: string): string {
  const reason = scanForInjection(text);
  return reason === undefined ? text : `[BLOCKED: ${reason}]`;
}
