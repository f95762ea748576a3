import { COMMAND_CHECKS } from './command-checks.ts';
import type { Inspector } from './command-checks.ts';
import { checkCode, stdinCode } from './command-code.ts';
import { canonicalPath, DANGER, DISK_DEVICE, HARD, isSystemPath, UNCERTAIN } from './command-rules.ts';
import type { Rule } from './command-rules.ts';
import { basename, commandHead, computedName, INTERPRETER, SHELLS, STARTUP_VARIABLES } from './command-words.ts';
import { parse } from './shell-lexer.ts';
import type { SimpleCommand, Word } from './shell-lexer.ts';

export { canonicalPath } from './command-rules.ts';

/**
 * The terminal's command guard. `hardline` commands are refused whatever anyone approves;
 * `dangerous` ones run only after a person approves them; `patternKey` is the stable short name
 * that "allow for this session" remembers.
 *
 * Checks run on what the shell would execute, not on the raw text: quotes and escapes are removed
 * (r'm' is rm), `$(echo rm)`-style substitutions are folded, `$HOME`/`${HOME}`/`~` are one home,
 * wrappers (sudo, env, nohup, busybox, /bin/...) are peeled off, and every simple command after
 * ; && || | is checked at command position. Text that is only data stays data: `echo "rm -rf /"` is
 * ok, while `bash -c "rm -rf /"`, `eval ...` and `echo ... | sh` are checked as commands. SQL
 * statements are the exception: they are matched anywhere in the text, because they reach a
 * database as strings.
 *
 * Where the guard cannot know what will run (a computed command name, eval, an interpreter's inline
 * program, code piped or here-documented into a shell, xargs or find -exec into a destructive
 * command, an alias or function defined on the spot, text that does not parse) the command needs
 * approval too: uncertainty is not a pass. The sandbox is what holds if a command slips through.
 */
export type GuardVerdict = 'hardline' | 'dangerous' | 'ok';

export interface CommandCheck {
  verdict: GuardVerdict;
  patternKey?: string;
  description?: string;
}

interface Finding {
  verdict: 'hardline' | 'dangerous';
  patternKey: string;
  description: string;
}

const MAX_DEPTH = 4;
const PRIVILEGE = /^(sudo|su|doas|runuser|pkexec|run0)$/;
/** Commands whose operands, when they come from xargs or find, may destroy whatever arrives. */
const DESTRUCTIVE = new Set([
  'rm',
  'rmdir',
  'unlink',
  'shred',
  'dd',
  'mv',
  'cp',
  'ln',
  'install',
  'rsync',
  'chmod',
  'chown',
  'chgrp',
  'truncate',
  'tee',
  'kill',
  'pkill',
  'killall',
  'sed',
  'find',
  'xargs',
  'parallel',
  'git',
  'eval',
  'source',
  '.',
]);

function wordsOf(texts: readonly string[]): Word[] {
  return texts.map((text) => ({ text, substitutions: [] }));
}

/** One spelling per file for "wrote it, then ran it": `./x.sh`, `x.sh` and `$PWD/x.sh` are one file. */
function fileKey(path: string): string {
  return canonicalPath(path.replace(/^(\$PWD|\$\{PWD\}|\.)\/+/, ''));
}

class Inspection {
  readonly hardlines: Finding[] = [];
  readonly dangers: Finding[] = [];
  readonly uncertainties: Finding[] = [];
  /** Files this command line writes, to notice it running one of them afterwards. */
  readonly #written = new Set<string>();

  /** The checks of one nesting level, as the per-command checks see them. */
  inspector(depth: number): Inspector {
    return {
      hardline: (rule) => this.#add(this.hardlines, 'hardline', rule),
      dangerous: (rule) => this.#add(this.dangers, 'dangerous', rule),
      uncertain: (rule) => this.#add(this.uncertainties, 'dangerous', rule),
      source: (text) => this.source(text, depth + 1),
      runsOn: (words, via) => this.#runsOn(words, via, depth),
      writeTarget: (path) => this.#writeTarget(path),
    };
  }

  #add(list: Finding[], verdict: Finding['verdict'], [patternKey, description]: Rule): void {
    list.push({ verdict, patternKey, description });
  }

  source(text: string, depth: number): void {
    if (depth > MAX_DEPTH) return this.#add(this.uncertainties, 'dangerous', UNCERTAIN.nested);
    this.#raw(text);
    const script = parse(text);
    if (script.unparsed !== null) this.#add(this.uncertainties, 'dangerous', UNCERTAIN.unparsed);
    script.commands.forEach((command, index) => this.#command(command, script.commands, index, depth));
  }

  /** Patterns that live in the text itself rather than in a command's words. */
  #raw(text: string): void {
    const collapsed = text.replace(/\s+/g, ' ');
    if (/([\w:.-]{1,64})\s*\(\s*\)\s*\{\s*\1\s*\|\s*\1\s*&?\s*;?\s*\}/.test(collapsed)) this.#add(this.hardlines, 'hardline', HARD.forkBomb);
    if (/\bDROP\s+(TABLE|DATABASE|SCHEMA)\b/i.test(text)) this.#add(this.dangers, 'dangerous', DANGER.sqlDrop);
    for (const match of text.matchAll(/\bDELETE\s+FROM\b([^;]*)/gi)) {
      if (!/\bWHERE\b/i.test(match[1]!)) this.#add(this.dangers, 'dangerous', DANGER.sqlDelete);
    }
    if (/\bTRUNCATE\s+(TABLE\s+)?[A-Za-z_"`]/i.test(text)) this.#add(this.dangers, 'dangerous', DANGER.sqlTruncate);
  }

  #command(command: SimpleCommand, pipeline: readonly SimpleCommand[], index: number, depth: number): void {
    const inspector = this.inspector(depth);
    for (const word of command.words) for (const source of word.substitutions) inspector.source(source);
    for (const redirect of command.redirects) {
      for (const source of redirect.substitutions) inspector.source(source);
      if (/>/.test(redirect.operator)) this.#writeTarget(redirect.target);
    }
    if (command.definesFunction === true) inspector.uncertain(UNCERTAIN.inlineDefinition);
    const texts = command.words.map((word) => word.text);
    const head = commandHead(texts);
    if (head.assigned.some((name) => STARTUP_VARIABLES.test(name))) inspector.uncertain(UNCERTAIN.shellStartup);
    if (head.source !== null) inspector.source(head.source);
    // `sudo -s`, `su`: a privilege wrapper with no command starts a shell on the same input.
    if (head.start < 0 && head.source === null && texts.length > 0 && PRIVILEGE.test(basename(texts[0]!))) stdinCode({ command, pipeline, index }, true, inspector);
    if (head.start < 0) return;
    const name = basename(texts[head.start]!);
    if (computedName(name, command.words[head.start]!.substitutions.length > 0)) inspector.uncertain(UNCERTAIN.dynamicCommand);
    const args = texts.slice(head.start + 1);
    if (/^(export|declare|typeset|readonly|local)$/.test(name) && args.some((arg) => STARTUP_VARIABLES.test(arg.split('=')[0]!))) {
      inspector.uncertain(UNCERTAIN.shellStartup);
    }
    const runs = [texts[head.start]!, ...(SHELLS.has(name) || INTERPRETER.test(name) || name === 'source' || name === '.' ? args.filter((arg) => !arg.startsWith('-')).slice(0, 1) : [])];
    if (runs.some((path) => this.#written.has(fileKey(path)))) inspector.uncertain(UNCERTAIN.writtenThenRun);
    COMMAND_CHECKS[/^mkfs\./.test(name) ? 'mkfs' : name]?.(args, inspector);
    checkCode({ name, args, argWords: command.words.slice(head.start + 1), command, pipeline, index }, inspector);
  }

  /** A command whose last operands arrive from elsewhere: what it does to them is unknown. */
  #runsOn(words: readonly string[], via: 'find' | 'xargs', depth: number): void {
    if (depth + 1 > MAX_DEPTH) return this.#add(this.uncertainties, 'dangerous', UNCERTAIN.nested);
    const { start } = commandHead(words);
    const name = start < 0 ? '' : basename(words[start]!);
    if (name === 'rm') this.#add(this.dangers, 'dangerous', via === 'find' ? DANGER.findDelete : DANGER.xargsRm);
    else if (DESTRUCTIVE.has(name) || SHELLS.has(name) || INTERPRETER.test(name)) {
      this.#add(this.uncertainties, 'dangerous', via === 'find' ? UNCERTAIN.findExec : UNCERTAIN.xargsExec);
    }
    const command: SimpleCommand = { words: wordsOf(words), redirects: [], joinedBy: null };
    this.#command(command, [command], 0, depth + 1);
  }

  #writeTarget(raw: string): void {
    this.#written.add(fileKey(raw));
    const path = canonicalPath(raw);
    if (DISK_DEVICE.test(path)) this.#add(this.hardlines, 'hardline', HARD.diskWrite);
    else if (isSystemPath(path)) this.#add(this.dangers, 'dangerous', DANGER.systemWrite);
  }
}

export function checkCommand(command: string): CommandCheck {
  const inspection = new Inspection();
  inspection.source(command, 0);
  // The most telling finding names the approval: a known danger before "cannot tell".
  const finding = inspection.hardlines[0] ?? inspection.dangers[0] ?? inspection.uncertainties[0];
  if (!finding) return { verdict: 'ok' };
  return { verdict: finding.verdict, patternKey: finding.patternKey, description: finding.description };
}
