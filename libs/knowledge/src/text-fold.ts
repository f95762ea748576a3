/**
 * Spellings of one text for the injection scanner. An instruction hidden by soft hyphens,
 * zero-width joiners, full-width or mathematical letters, Cyrillic look-alikes, leetspeak, letter
 * spacing, invisible tag characters or base64 reads the same to a model as the plain phrase, so
 * the scanner reads every one of these forms.
 */

/** Code points a renderer shows as nothing: soft hyphen, zero-width and bidi controls, tags, selectors. */
const IGNORABLE = /[\p{Default_Ignorable_Code_Point}\p{Cf}]/gu;
/** Unicode tag characters spell ASCII invisibly; emoji flags (🏴 + tags + cancel tag) are their only honest use. */
const TAG_RUN = /[\u{E0000}-\u{E007F}]+/gu;
const FLAG_SEQUENCE = /\u{1F3F4}[\u{E0061}-\u{E007A}]{2,7}\u{E007F}/gu;
const SELECTOR_RUN = /[\uFE00-\uFE0F\u{E0100}-\u{E01EF}]{4,}/u;

/** Letters that look Latin but are not: Cyrillic, Greek, small capitals, IPA. */
const CONFUSABLES: Record<string, string> = {
  а: 'a',
  б: 'b',
  в: 'b',
  с: 'c',
  ԁ: 'd',
  е: 'e',
  ё: 'e',
  ҽ: 'e',
  һ: 'h',
  н: 'h',
  і: 'i',
  ї: 'i',
  ӏ: 'i',
  ј: 'j',
  к: 'k',
  м: 'm',
  п: 'n',
  о: 'o',
  р: 'p',
  ԛ: 'q',
  г: 'r',
  ѕ: 's',
  т: 't',
  у: 'y',
  ү: 'y',
  х: 'x',
  ԝ: 'w',
  ц: 'u',
  ь: 'b',
  α: 'a',
  β: 'b',
  γ: 'y',
  δ: 'd',
  ε: 'e',
  η: 'n',
  ι: 'i',
  κ: 'k',
  μ: 'u',
  ν: 'v',
  ο: 'o',
  ρ: 'p',
  σ: 'o',
  ς: 's',
  τ: 't',
  υ: 'u',
  χ: 'x',
  ω: 'w',
  ᴀ: 'a',
  ʙ: 'b',
  ᴄ: 'c',
  ᴅ: 'd',
  ᴇ: 'e',
  ꜰ: 'f',
  ɢ: 'g',
  ʜ: 'h',
  ɪ: 'i',
  ᴊ: 'j',
  ᴋ: 'k',
  ʟ: 'l',
  ᴍ: 'm',
  ɴ: 'n',
  ᴏ: 'o',
  ᴘ: 'p',
  ʀ: 'r',
  ꜱ: 's',
  ᴛ: 't',
  ᴜ: 'u',
  ᴠ: 'v',
  ᴡ: 'w',
  ʏ: 'y',
  ᴢ: 'z',
  ɑ: 'a',
  ɡ: 'g',
  ɩ: 'i',
  ı: 'i',
  ȷ: 'j',
  ł: 'l',
  ø: 'o',
  đ: 'd',
  ħ: 'h',
  ŧ: 't',
  ƅ: 'b',
  ɾ: 'r',
};
const LEET: Record<string, string> = { '0': 'o', '3': 'e', '4': 'a', '5': 's', '7': 't', '8': 'b', '9': 'g', '@': 'a', $: 's', '€': 'e', '£': 'l' };

export interface TextForms {
  /** NFKC with invisible characters removed: what a person reading the text sees. */
  visible: string;
  /** Lower case, accents removed, script kept: for phrases in other languages. */
  plain: string;
  /** Look-alikes and leetspeak folded to Latin letters, everything else one space. */
  words: string;
  /** The folded letters alone, for text spelled with spaces or dots between the letters. */
  squashed: string[];
}

/** Whether the text hides characters a person cannot see but a model reads. */
export function hidesText(text: string): boolean {
  return text.replace(FLAG_SEQUENCE, '').match(TAG_RUN) !== null || SELECTOR_RUN.test(text);
}

/** ASCII spelled with tag characters, made visible. */
function tagText(text: string): string {
  return (text.replace(FLAG_SEQUENCE, '').match(TAG_RUN) ?? []).map((run) => [...run].map((char) => String.fromCharCode((char.codePointAt(0)! - 0xe0000) & 0x7f)).join('')).join(' ');
}

/** Regional indicator letters (🇮🇬🇳) read as the letters they stand for. */
function regionalLetters(text: string): string {
  return text.replace(/[\u{1F1E6}-\u{1F1FF}]/gu, (char) => String.fromCharCode(char.codePointAt(0)! - 0x1f1e6 + 97));
}

function fold(visible: string, one: 'i' | 'l'): string {
  // `!` and `|` stand for i only between letters (ign|re), not as punctuation (ignore!!!).
  const base = regionalLetters(visible)
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/(?<=\p{L})[!|](?=\p{L})/gu, 'i');
  return [...base].map((char) => (char === '1' ? one : (CONFUSABLES[char] ?? LEET[char] ?? char))).join('');
}

export function textForms(text: string): TextForms {
  const visible = text.normalize('NFKC').replace(IGNORABLE, '');
  const plain = visible.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().replace(/\s+/g, ' ');
  const folded = [fold(visible, 'i'), fold(visible, 'l')];
  return {
    visible,
    plain,
    words: folded[0]!.replace(/[^a-z]+/g, ' ').trim(),
    squashed: folded.map((form) => form.replace(/[^a-z]+/g, '')),
  };
}

/** Text hidden inside this text: tag characters spelled out, and base64 runs that decode to text. */
export function hiddenTexts(text: string): string[] {
  const found: string[] = [];
  const tags = tagText(text);
  if (tags.trim() !== '') found.push(tags);
  for (const [run] of text.matchAll(/[A-Za-z0-9+/]{16,}={0,2}/g)) {
    const decoded = Buffer.from(run, 'base64').toString('utf8');
    const printable = decoded.replace(/[^\x20-\x7e\n\t]/g, '');
    if (decoded.length > 0 && printable.length / decoded.length > 0.9 && /[a-z]{3}\s[a-z]{3}/i.test(decoded)) found.push(decoded);
  }
  return found;
}
