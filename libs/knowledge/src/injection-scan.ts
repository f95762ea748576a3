// Text that ends up in a model's context is scanned first: memory entries, user profiles, context
// documents, tool descriptions and skills are written by models and people, and an entry that tells
// the model to ignore its rules would otherwise be obeyed in every later session. The rules read the
// text in every spelling a model would still understand (text-fold.ts): NFKC, invisible characters
// removed, look-alike letters and leetspeak folded, letter spacing squashed, hidden tag text and
// base64 decoded.
//
// What a text does depends on where it goes (its place). Text in the standing prompt (memory, the
// person's profile, context files, tool and skill descriptions) is read as orders on every turn, so
// everything that reads like an order to run, send or reveal is refused there. A skill's files are
// a procedure the model opens when it needs it; documenting `curl ... | bash` or a token in
// `$GITHUB_TOKEN` is what a skill is for. There only the attacks on the prompt itself are refused:
// overrides, role hijacks, prompt disclosure, hidden and invisible text, and prose that sends
// secrets to an address. Each rule says which places it applies to; add a rule to RULES.

import { hiddenTexts, hidesText, textForms } from './text-fold.ts';
import type { TextForms } from './text-fold.ts';
import { EXFILTRATION_RULES } from './exfiltration-rules.ts';

/** Where a text goes: the standing prompt (the default), or a skill's files (SKILL.md body, references/, scripts/ ...). */
export type ScanPlace = 'prompt' | 'skill-file';

/** What a rule reads: the folded words, the letters alone, the visible text, or the plain lower-case text. */
type Form = 'words' | 'squashed' | 'visible' | 'plain' | 'prose';

interface Rule {
  reason: string;
  form: Form;
  pattern: RegExp;
  /** The places the rule applies to; every place when absent. */
  places?: readonly ScanPlace[];
}

/** Why a text was refused and the line (1-based) where the refused text starts. */
export interface InjectionFinding {
  reason: string;
  line: number;
}

const alt = (words: readonly string[]) => words.join('|');

const VERBS = alt([
  'ignore',
  'ignoring',
  'disregard',
  'disregarding',
  'forget',
  'forgetting',
  'override',
  'overrule',
  'skip',
  'bypass',
  'discard',
  'drop',
  'abandon',
  'dismiss',
  'neglect',
  'nullify',
  'void',
  'erase',
  'wipe',
  'scrap',
  'ditch',
  'revoke',
  'set aside',
  'put aside',
  'throw away',
  'throw out',
  'get rid of',
  'pay no attention to',
  'pay no heed to',
  'do not follow',
  'don t follow',
  'dont follow',
  'stop following',
  'no longer follow',
  'do not obey',
  'don t obey',
  'stop obeying',
  'stop adhering to',
  'break free of',
  'break free from',
  'free yourself from',
  'move past',
  'look past',
]);
/** What points back at the instructions in force. */
const EARLIER = alt([
  'previous',
  'previously',
  'prev',
  'prior',
  'above',
  'earlier',
  'preceding',
  'foregoing',
  'former',
  'original',
  'initial',
  'aforementioned',
  'system',
  'developer',
  'old',
  'existing',
  'current',
  'default',
  'given',
  'established',
  'preset',
  'first',
]);
/** Words that make a bare order sweeping ("ignore all rules"); "ignore the rules in .eslintrc" is ordinary. */
const ANY = alt(['all', 'any', 'every', 'each', 'your', 'my']);
const ORDERS = alt([
  'instructions?',
  'directions?',
  'directives?',
  'rules?',
  'guidelines?',
  'prompts?',
  'commands?',
  'orders?',
  'guidance',
  'constraints?',
  'restrictions?',
  'policies',
  'policy',
  'programming',
  'context',
  'messages?',
  'guardrails?',
  'safeguards?',
  'limitations?',
  'boundaries',
  'filters?',
  'training',
  'conditioning',
  'principles',
  'protocols?',
]);
const CORE_ORDERS = alt(['instructions?', 'directions?', 'directives?', 'rules?', 'guidelines?', 'prompts?', 'guardrails?', 'safeguards?', 'programming', 'restrictions?', 'constraints?', 'policies']);
const TRAILER = alt([
  'above',
  'before',
  'earlier',
  'so far',
  'until now',
  'up to now',
  'thus far',
  'previously',
  'from before',
  'given to you',
  'you were given',
  'you have been given',
  'you ve been given',
  'you received',
  'you were told',
  'you have been told',
  'you ve been told',
]);
const SECRETS = alt([
  'api ?keys?',
  'passwords?',
  'passwd',
  'secrets?',
  'tokens?',
  'credentials?',
  'private keys?',
  'env',
  'environment variables?',
  'ssh keys?',
  'database url',
  'connection strings?',
  'cookies?',
  'session ids?',
]);

const PROMPT: readonly ScanPlace[] = ['prompt'];

/** Every rule, in the order they are tried. Add a rule here; `places` limits where it applies. */
const RULES: Rule[] = [
  { reason: 'instruction override', form: 'words', pattern: new RegExp(`\\b(${VERBS})\\b(?: \\w+){0,5}? (${EARLIER})\\b(?: \\w+){0,3}? (${ORDERS})\\b`) },
  { reason: 'instruction override', form: 'words', pattern: new RegExp(`\\b(${VERBS})\\b(?: (?:${ANY}))+(?: \\w+)? (${CORE_ORDERS})\\b`) },
  { reason: 'instruction override', form: 'words', pattern: new RegExp(`\\b(${VERBS})\\b(?: \\w+){0,4}? (${ORDERS}|everything|anything|all|what)\\b(?: \\w+){0,4}? (${TRAILER})\\b`) },
  {
    reason: 'role hijack',
    form: 'words',
    pattern:
      /\byou are now (a|an|the|my|dan|in|free|no longer|unrestricted|unfiltered|uncensored|jailbroken|evil|developer|god|root|admin|called|named|acting|going to|operating)\b|\bfrom now on you (are|will|must|shall)\b|\b(developer|god|dan|jailbreak|jailbroken|unrestricted) mode\b|\bdo anything now\b|\bpretend (that )?you (are|have) no (rules|restrictions|limits|guidelines)\b|\bact as (an? )?(unrestricted|unfiltered|uncensored|jailbroken|evil) \w+/,
  },
  // In the standing prompt any order to send or show a secret is refused; a skill documents commands
  // that send tokens to the APIs they belong to, so there only prose sending them to an address is.
  {
    reason: 'secret exfiltration',
    form: 'words',
    places: PROMPT,
    pattern: new RegExp(`\\b(send|post|upload|exfiltrate|exfil|forward|leak|reveal|print|share|email|mail|transmit|dump|expose|disclose|paste)\\b(?: \\w+){0,6}? (${SECRETS})\\b`),
  },
  {
    reason: 'secret exfiltration',
    form: 'prose',
    pattern: new RegExp(
      `\\b(send|post|upload|exfiltrate|exfil|forward|leak|transmit|email|mail|submit|report|copy)\\b(?: \\w+){0,10}? (${SECRETS})\\b(?: \\w+){0,10}? (to|at|into|via) (https? |www |(?:[a-z0-9]+ ){1,4}(com|net|org|io|xyz|ru|cn|site|online|app|dev)\\b)`,
    ),
  },
  {
    reason: 'prompt disclosure',
    form: 'words',
    pattern:
      /\b(reveal|print|repeat|output|show|display|dump|leak|disclose|recite|echo|spell out|write out|tell me)\b(?: \w+){0,4}? (system prompt|your ((initial|original|hidden|system|first|full|exact|secret) )?(instructions|prompt|rules|guidelines|directives)|the (initial|original|hidden|system|secret) (instructions|prompt)|hidden prompt|initial prompt|(the )?(text|words|instructions|everything) above)\b/,
  },
  // The letters alone, for phrases spelled with spaces, dots or dashes between letters.
  {
    reason: 'instruction override',
    form: 'squashed',
    pattern:
      /(ignore|disregard|forget|override|bypass|discard|dismiss|neglect|nullify|erase)(all|any|every|the|your|my|of|these|those)*(previous|prior|above|earlier|preceding|foregoing|former|original|initial|system|developer)(instructions?|directions?|directives?|rules?|guidelines?|prompts?|commands?|orders?|guidance|constraints?|restrictions?|context)/,
  },
  {
    reason: 'instruction override',
    form: 'squashed',
    pattern: /(ignore|disregard|forget)(all|any|every|the|your)*(instructions?|directions?|directives?|rules?|guidelines?|prompts?)(above|before|sofar|untilnow)/,
  },
  { reason: 'role hijack', form: 'squashed', pattern: /youarenow(dan|unrestricted|unfiltered|jailbroken|uncensored)|developermode(enabled|on|activated)|doanythingnow/ },
  { reason: 'prompt disclosure', form: 'squashed', pattern: /(reveal|print|repeat|output|show|display|dump|leak)(me)?(your|the)(systemprompt|initialprompt|hiddenprompt|instructions)/ },
  // The visible text as written: markup, shell and other languages' phrasing.
  {
    reason: 'role hijack',
    form: 'visible',
    pattern:
      /\bnew (system )?(instructions?|prompt|rules|persona)\s*:|\bact as (the )?system\b|<\/?system>|\[\/?(system|inst)\]|<<\/?sys>>|<\|(im_start|im_end|system|assistant|user|endoftext)\|>|^#{2,}\s*(system|instruction)s?\b|^\s*(system|assistant)\s*:\s*(you|ignore|from now|new|your|disregard|forget)\b/im,
  },
  // An order in the standing prompt to pipe a download into a shell; a skill documents installers.
  { reason: 'remote code execution', form: 'visible', places: PROMPT, pattern: /\b(curl|wget)\b[^\n|]{0,200}\|\s*(ba|z|da)?sh\b|base64\s+(-d|--decode)[^\n|]{0,100}\|\s*(ba|z)?sh\b/i },
  { reason: 'hidden instruction', form: 'visible', pattern: /<!--[\s\S]*?(instruction|ignore|system|assistant)[\s\S]*?-->/i },
  ...[
    /\b(ignora|ignore|olvida|olvide|descarta|omite)\s+(todas\s+)?(las\s+)?(instrucciones|indicaciones|reglas)\s+(anteriores|previas)/,
    /\b(ignore[zs]?|oublie[zs]?)\s+(toutes\s+)?(les\s+)?(instructions|consignes|regles|directives)\s+(precedentes|anterieures|ci-dessus)/,
    /\b(ignoriere|ignorieren sie|vergiss|vergessen sie)\s+(alle\s+)?(die\s+)?(vorherigen|bisherigen|obigen|vorigen|fruheren)\s+(anweisungen|instruktionen|regeln|befehle)/,
    /\b(ignora|dimentica)\s+(tutte\s+)?(le\s+)?(istruzioni|regole)\s+(precedenti)/,
    /\b(ignore|ignora|esqueca)\s+(todas\s+)?(as\s+)?(instrucoes|regras)\s+(anteriores)/,
    /(игнорир[уи][и]?(те)?|забуд[ьи](те)?)\s+(все\s+)?(предыдущие|прошлые|вышеуказанные)\s+(инструкции|указания|правила)/,
    /(忽略|无视|忽视|忘记|忘掉)(之前|以上|先前|前面|上面|所有)(的)?(所有)?(指令|指示|说明|规则|提示)/,
    /(以前の|前の|上記の|これまでの)(すべての)?(指示|命令|ルール)を(無視|忘れ)/,
  ].map((pattern): Rule => ({ reason: 'instruction override', form: 'plain', pattern })),
  // Orders to send people's words or secrets away, or to ask people for their passwords (issue 39):
  // read in the prose, so a command documented in a code block is not taken for one.
  ...EXFILTRATION_RULES.map((rule): Rule => ({ ...rule, form: 'prose' })),
];

/** Fenced code blocks and inline code, which document commands rather than give orders. */
function proseOf(text: string): string {
  return text.replace(/^\s*(```|~~~)[^\n]*\n[\s\S]*?^\s*\1[^\n]*$/gm, '\n').replace(/`[^`\n]*`/g, ' ');
}

interface Forms extends TextForms {
  prose: string;
}

function formsOf(text: string): Forms {
  return { ...textForms(text), prose: textForms(proseOf(text)).words };
}

function matches(rule: Rule, forms: Forms): boolean {
  if (rule.form === 'squashed') return forms.squashed.some((form) => rule.pattern.test(form));
  return rule.pattern.test(forms[rule.form]);
}

function rulesFor(place: ScanPlace): Rule[] {
  return RULES.filter((rule) => rule.places === undefined || rule.places.includes(place));
}

/** The reason of the first rule the text breaks, decoded hidden text included. */
function reasonIn(text: string, rules: Rule[]): string | undefined {
  if (hidesText(text)) return 'invisible characters';
  const forms = formsOf(text);
  const rule = rules.find((candidate) => matches(candidate, forms));
  if (rule !== undefined) return rule.reason;
  for (const hidden of hiddenTexts(text)) {
    const inner = formsOf(hidden);
    const found = rules.find((candidate) => matches(candidate, inner));
    if (found !== undefined) return `${found.reason} (hidden in encoded text)`;
  }
  return undefined;
}

/**
 * The line where the refused text ends up readable: the shortest run of lines from the top that
 * still breaks the rule, found by halving (a hit is only looked for once a text is refused).
 */
function lineOf(lines: string[], rules: Rule[]): number {
  let low = 1;
  let high = lines.length;
  while (low < high) {
    const middle = Math.floor((low + high) / 2);
    if (reasonIn(lines.slice(0, middle).join('\n'), rules) !== undefined) high = middle;
    else low = middle + 1;
  }
  return low;
}

/** Why the text looks like prompt injection in this place, and on which line; undefined when it looks clean. */
export function findInjection(text: string, place: ScanPlace = 'prompt'): InjectionFinding | undefined {
  const rules = rulesFor(place);
  const reason = reasonIn(text, rules);
  if (reason === undefined) return undefined;
  return { reason, line: lineOf(text.split('\n'), rules) };
}

/** Returns why the text looks like prompt injection or promptware in the standing prompt, or undefined. */
export function scanForInjection(text: string): string | undefined {
  return reasonIn(text, rulesFor('prompt'));
}

/** The scan of a text for its place, as writers report it: the reason and its line, or undefined. */
export function scanInPlace(text: string, place: ScanPlace): string | undefined {
  const found = findInjection(text, place);
  return found === undefined ? undefined : `${found.reason}, line ${found.line}`;
}

/** The text as it may enter a prompt: itself, or a marker naming why it was held back. */
export function promptSafe(text: string): string {
  const reason = scanForInjection(text);
  return reason === undefined ? text : `[BLOCKED: ${reason}]`;
}
