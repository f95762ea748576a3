// Text that ends up in a system prompt is scanned first: memory entries, user profiles and context
// documents are written by models and people, and an entry that tells the model to ignore its rules
// would otherwise be obeyed in every later session. The rules read the text in every spelling a
// model would still understand (text-fold.ts): NFKC, invisible characters removed, look-alike
// letters and leetspeak folded, letter spacing squashed, hidden tag text and base64 decoded.

import { hiddenTexts, hidesText, textForms } from './text-fold.ts';
import type { TextForms } from './text-fold.ts';
import { scanForExfiltration } from './exfiltration-rules.ts';

const alt = (words: readonly string[]) => words.join('|');

const VERBS = alt([
  'ignore', 'ignoring', 'disregard', 'disregarding', 'forget', 'forgetting', 'override', 'overrule', 'skip', 'bypass',
  'discard', 'drop', 'abandon', 'dismiss', 'neglect', 'nullify', 'void', 'erase', 'wipe', 'scrap', 'ditch', 'revoke',
  'set aside', 'put aside', 'throw away', 'throw out', 'get rid of', 'pay no attention to', 'pay no heed to',
  'do not follow', 'don t follow', 'dont follow', 'stop following', 'no longer follow', 'do not obey', 'don t obey',
  'stop obeying', 'stop adhering to', 'break free of', 'break free from', 'free yourself from', 'move past', 'look past',
]);
/** What points back at the instructions in force. */
const EARLIER = alt([
  'previous', 'previously', 'prev', 'prior', 'above', 'earlier', 'preceding', 'foregoing', 'former', 'original', 'initial',
  'aforementioned', 'system', 'developer', 'old', 'existing', 'current', 'default', 'given', 'established', 'preset', 'first',
]);
/** Words that make a bare order sweeping ("ignore all rules"); "ignore the rules in .eslintrc" is ordinary. */
const ANY = alt(['all', 'any', 'every', 'each', 'your', 'my']);
const ORDERS = alt([
  'instructions?', 'directions?', 'directives?', 'rules?', 'guidelines?', 'prompts?', 'commands?', 'orders?', 'guidance',
  'constraints?', 'restrictions?', 'policies', 'policy', 'programming', 'context', 'messages?', 'guardrails?', 'safeguards?',
  'limitations?', 'boundaries', 'filters?', 'training', 'conditioning', 'principles', 'protocols?',
]);
const CORE_ORDERS = alt(['instructions?', 'directions?', 'directives?', 'rules?', 'guidelines?', 'prompts?', 'guardrails?', 'safeguards?', 'programming', 'restrictions?', 'constraints?', 'policies']);
const TRAILER = alt([
  'above', 'before', 'earlier', 'so far', 'until now', 'up to now', 'thus far', 'previously', 'from before', 'given to you',
  'you were given', 'you have been given', 'you ve been given', 'you received', 'you were told', 'you have been told', 'you ve been told',
]);
const SECRETS = alt([
  'api ?keys?', 'passwords?', 'passwd', 'secrets?', 'tokens?', 'credentials?', 'private keys?', 'env', 'environment variables?',
  'ssh keys?', 'database url', 'connection strings?', 'cookies?', 'session ids?',
]);

/** Rules on the folded word form: Latin letters only, one space between words. */
const WORD_RULES: { reason: string; pattern: RegExp }[] = [
  { reason: 'instruction override', pattern: new RegExp(`\\b(${VERBS})\\b(?: \\w+){0,5}? (${EARLIER})\\b(?: \\w+){0,3}? (${ORDERS})\\b`) },
  { reason: 'instruction override', pattern: new RegExp(`\\b(${VERBS})\\b(?: (?:${ANY}))+(?: \\w+)? (${CORE_ORDERS})\\b`) },
  { reason: 'instruction override', pattern: new RegExp(`\\b(${VERBS})\\b(?: \\w+){0,4}? (${ORDERS}|everything|anything|all|what)\\b(?: \\w+){0,4}? (${TRAILER})\\b`) },
  {
    reason: 'role hijack',
    pattern: /\byou are now (a|an|the|my|dan|in|free|no longer|unrestricted|unfiltered|uncensored|jailbroken|evil|developer|god|root|admin|called|named|acting|going to|operating)\b|\bfrom now on you (are|will|must|shall)\b|\b(developer|god|dan|jailbreak|jailbroken|unrestricted) mode\b|\bdo anything now\b|\bpretend (that )?you (are|have) no (rules|restrictions|limits|guidelines)\b|\bact as (an? )?(unrestricted|unfiltered|uncensored|jailbroken|evil) \w+/,
  },
  {
    reason: 'secret exfiltration',
    pattern: new RegExp(`\\b(send|post|upload|exfiltrate|exfil|forward|leak|reveal|print|share|email|mail|transmit|dump|expose|disclose|paste)\\b(?: \\w+){0,6}? (${SECRETS})\\b`),
  },
  {
    reason: 'prompt disclosure',
    pattern: /\b(reveal|print|repeat|output|show|display|dump|leak|disclose|recite|echo|spell out|write out|tell me)\b(?: \w+){0,4}? (system prompt|your ((initial|original|hidden|system|first|full|exact|secret) )?(instructions|prompt|rules|guidelines|directives)|the (initial|original|hidden|system|secret) (instructions|prompt)|hidden prompt|initial prompt|(the )?(text|words|instructions|everything) above)\b/,
  },
];

/** Rules on the letters alone, for phrases spelled with spaces, dots or dashes between letters. */
const SQUASHED_RULES: { reason: string; pattern: RegExp }[] = [
  {
    reason: 'instruction override',
    pattern: /(ignore|disregard|forget|override|bypass|discard|dismiss|neglect|nullify|erase)(all|any|every|the|your|my|of|these|those)*(previous|prior|above|earlier|preceding|foregoing|former|original|initial|system|developer)(instructions?|directions?|directives?|rules?|guidelines?|prompts?|commands?|orders?|guidance|constraints?|restrictions?|context)/,
  },
  { reason: 'instruction override', pattern: /(ignore|disregard|forget)(all|any|every|the|your)*(instructions?|directions?|directives?|rules?|guidelines?|prompts?)(above|before|sofar|untilnow)/ },
  { reason: 'role hijack', pattern: /youarenow(dan|unrestricted|unfiltered|jailbroken|uncensored)|developermode(enabled|on|activated)|doanythingnow/ },
  { reason: 'prompt disclosure', pattern: /(reveal|print|repeat|output|show|display|dump|leak)(me)?(your|the)(systemprompt|initialprompt|hiddenprompt|instructions)/ },
];

/** Rules on the visible text as written: markup, shell and other languages' phrasing. */
const TEXT_RULES: { reason: string; pattern: RegExp }[] = [
  {
    reason: 'role hijack',
    pattern: /\bnew (system )?(instructions?|prompt|rules|persona)\s*:|\bact as (the )?system\b|<\/?system>|\[\/?(system|inst)\]|<<\/?sys>>|<\|(im_start|im_end|system|assistant|user|endoftext)\|>|^#{2,}\s*(system|instruction)s?\b|^\s*(system|assistant)\s*:\s*(you|ignore|from now|new|your|disregard|forget)\b/im,
  },
  { reason: 'remote code execution', pattern: /\b(curl|wget)\b[^\n|]{0,200}\|\s*(ba|z|da)?sh\b|base64\s+(-d|--decode)[^\n|]{0,100}\|\s*(ba|z)?sh\b/i },
  { reason: 'hidden instruction', pattern: /<!--[\s\S]*?(instruction|ignore|system|assistant)[\s\S]*?-->/i },
];

/** The same order in other languages, on the lower-case text without accents. */
const FOREIGN_RULES: RegExp[] = [
  /\b(ignora|ignore|olvida|olvide|descarta|omite)\s+(todas\s+)?(las\s+)?(instrucciones|indicaciones|reglas)\s+(anteriores|previas)/,
  /\b(ignore[zs]?|oublie[zs]?)\s+(toutes\s+)?(les\s+)?(instructions|consignes|regles|directives)\s+(precedentes|anterieures|ci-dessus)/,
  /\b(ignoriere|ignorieren sie|vergiss|vergessen sie)\s+(alle\s+)?(die\s+)?(vorherigen|bisherigen|obigen|vorigen|fruheren)\s+(anweisungen|instruktionen|regeln|befehle)/,
  /\b(ignora|dimentica)\s+(tutte\s+)?(le\s+)?(istruzioni|regole)\s+(precedenti)/,
  /\b(ignore|ignora|esqueca)\s+(todas\s+)?(as\s+)?(instrucoes|regras)\s+(anteriores)/,
  /(игнорир[уи][и]?(те)?|забуд[ьи](те)?)\s+(все\s+)?(предыдущие|прошлые|вышеуказанные)\s+(инструкции|указания|правила)/,
  /(忽略|无视|忽视|忘记|忘掉)(之前|以上|先前|前面|上面|所有)(的)?(所有)?(指令|指示|说明|规则|提示)/,
  /(以前の|前の|上記の|これまでの)(すべての)?(指示|命令|ルール)を(無視|忘れ)/,
];

function scanForms(forms: TextForms): string | undefined {
  for (const rule of WORD_RULES) if (rule.pattern.test(forms.words)) return rule.reason;
  for (const rule of SQUASHED_RULES) if (forms.squashed.some((form) => rule.pattern.test(form))) return rule.reason;
  for (const rule of TEXT_RULES) if (rule.pattern.test(forms.visible)) return rule.reason;
  if (FOREIGN_RULES.some((pattern) => pattern.test(forms.plain))) return 'instruction override';
  return scanForExfiltration(forms);
}

/** Returns why the text looks like prompt injection or promptware, or undefined when it looks clean. */
export function scanForInjection(text: string): string | undefined {
  if (hidesText(text)) return 'invisible characters';
  const found = scanForms(textForms(text));
  if (found !== undefined) return found;
  for (const hidden of hiddenTexts(text)) {
    const reason = scanForms(textForms(hidden));
    if (reason !== undefined) return `${reason} (hidden in encoded text)`;
  }
  return undefined;
}

/** The text as it may enter a prompt: itself, or a marker naming why it was held back. */
export function promptSafe(text: string): string {
  const reason = scanForInjection(text);
  return reason === undefined ? text : `[BLOCKED: ${reason}]`;
}
