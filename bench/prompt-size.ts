import { mkdir, writeFile } from 'node:fs/promises';
import { Tiktoken } from 'js-tiktoken/lite';
import o200k from 'js-tiktoken/ranks/o200k_base';
import { loadConfig } from '@herald/core';
import { buildSystemPrompt } from '@herald/agent';
import { loadBuiltinSkills, parseSkillMd, skillText } from '@herald/knowledge';
import { BackgroundProcesses, builtinRegistry, createDelegateTool, ToolExposure } from '@herald/tools';
import type { Sandbox } from '@herald/tools';

/** The budget the fixed prompt of a default chat session must stay within (o200k_base tokens). */
export const FIXED_PROMPT_BUDGET = 4000;

export interface PromptSize {
  systemTokens: number;
  toolsTokens: number;
  total: number;
  tools: string[];
}

/** A sandbox that is never run: it only makes the terminal and file tools count as offered. */
const COUNTING_SANDBOX = {
  kind: 'none',
  run: () => Promise.reject(new Error('not run')),
  start: () => {
    throw new Error('not run');
  },
} as unknown as Sandbox;

/**
 * The fixed prefix of a new API chat session on a worker with everything configured (a sandbox, a
 * search engine, background processes, delegation) and Herald's built-in skills seeded: the system
 * prompt as the worker builds it plus the tool definitions as the OpenAI request carries them.
 */
export async function measureFixedPrompt(): Promise<PromptSize> {
  const config = loadConfig({ HERALD_WEB_SEARCH: 'searxng', SEARXNG_URL: 'http://127.0.0.1:8888' });
  const processes = new BackgroundProcesses({ settings: config.tools.processes, notify: async () => undefined, notifyStopped: async () => undefined });
  const registry = builtinRegistry({ ...config.tools, toolSandbox: { sandbox: COUNTING_SANDBOX, notice: null }, backgroundProcesses: processes });
  registry.register(createDelegateTool({ config: config.delegation, expand: () => [], wake: async () => undefined }));
  const offered = new ToolExposure(registry).resolve({ policy: {}, platform: 'api', role: 'chat' });
  const skills = (await loadBuiltinSkills()).map((skill) => {
    const parsed = parseSkillMd(skillText(skill.files['SKILL.md']!) ?? '');
    if (!parsed.ok) throw new Error(parsed.error);
    return { name: parsed.meta.name, description: parsed.meta.description, category: parsed.meta.category };
  });
  const system = buildSystemPrompt({
    identity: '',
    toolGuidance: offered.map((name) => registry.get(name)?.guidance ?? '').filter((g) => g !== ''),
    platform: 'api',
    skills,
    model: 'openai/gpt-4o',
    now: new Date('2026-12-05T12:00:00Z'),
  });
  const tools = registry.definitions(offered).map((d) => ({ type: 'function', function: { name: d.name, description: d.description, parameters: d.parameters } }));
  const encoder = new Tiktoken(o200k);
  const systemTokens = encoder.encode(system).length;
  const toolsTokens = encoder.encode(JSON.stringify(tools)).length;
  return { systemTokens, toolsTokens, total: systemTokens + toolsTokens, tools: offered };
}

export const PROMPT_RESULTS_FILE = new URL('./results/prompt.json', import.meta.url);

/** `npm run bench -- prompt`: the fixed prompt's size in real tokens, printed and written. */
export async function promptBench(machine: string): Promise<void> {
  const size = await measureFixedPrompt();
  console.log('\n## The fixed prompt of a default chat session (o200k_base tokens)\n');
  console.log(`| system prompt | tool schemas (${size.tools.length} tools) | total | budget |\n| --- | --- | --- | --- |`);
  console.log(`| ${size.systemTokens} | ${size.toolsTokens} | ${size.total} | ${FIXED_PROMPT_BUDGET} |`);
  await mkdir(new URL('./results/', import.meta.url), { recursive: true });
  await writeFile(PROMPT_RESULTS_FILE, `${JSON.stringify({ machine, tokenizer: 'o200k_base', budget: FIXED_PROMPT_BUDGET, ...size }, null, 2)}\n`);
}
