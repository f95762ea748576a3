import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BUILTIN_TOOLSETS, defineTool, expandToolsets, resolveTools, ToolExposure, ToolRegistry, toolPolicySchema } from '../src/index.ts';
import type { ToolsetCatalog } from '../src/index.ts';

const catalog: ToolsetCatalog = {
  a: { description: '', tools: ['a1'], includes: ['b', 'c'] },
  b: { description: '', tools: ['b1'], includes: ['d'] },
  c: { description: '', tools: ['c1'], includes: ['d'] },
  d: { description: '', tools: ['d1', 'd2'], includes: ['a'] },
  e: { description: '', tools: ['e1'], includes: [] },
  deep: { description: '', tools: [], includes: ['e', 'a'] },
  x: { description: '', tools: [], includes: ['y'] },
  y: { description: '', tools: [], includes: ['e'] },
};

const everything = () => true;

describe('toolset resolution', () => {
  it('expands includes recursively through cycles and diamonds, each toolset once', () => {
    const { tools, unknown } = expandToolsets(['a'], catalog);
    expect([...tools].sort()).toEqual(['a1', 'b1', 'c1', 'd1', 'd2']);
    expect(unknown).toEqual([]);
  });

  it('reports unknown toolset names and expands them to nothing', () => {
    const { tools, unknown } = expandToolsets(['e', 'nope'], catalog);
    expect([...tools]).toEqual(['e1']);
    expect(unknown).toEqual(['nope']);
  });

  it('subtracts disabled toolsets last, through nested includes', () => {
    // e is enabled through deep and disabled two levels down through x -> y -> e.
    const tools = resolveTools({ enabled: ['deep'], disabled: ['x'], catalog, registered: new Map(), pluginTools: [], isAvailable: everything });
    expect(tools).toEqual(['a1', 'b1', 'c1', 'd1', 'd2']);
    // Disabling a toolset that includes others removes all of them, even tools also enabled directly.
    const none = resolveTools({ enabled: ['deep', 'e'], disabled: ['deep'], catalog, registered: new Map(), pluginTools: [], isAvailable: everything });
    expect(none).toEqual([]);
  });

  it('adds plugin tools, lets a disabled toolset remove them, and applies availability last', () => {
    const registered = new Map([['plugins', ['p1']]]);
    const base = { enabled: ['e'], catalog, registered, pluginTools: ['p1'] };
    expect(resolveTools({ ...base, disabled: [], isAvailable: everything })).toEqual(['e1', 'p1']);
    expect(resolveTools({ ...base, disabled: ['plugins'], isAvailable: everything })).toEqual(['e1']);
    expect(resolveTools({ ...base, disabled: [], isAvailable: (tool) => tool !== 'e1' })).toEqual(['p1']);
  });

  it('treats all and * as every toolset', () => {
    expect(resolveTools({ enabled: ['*'], disabled: ['a'], catalog, registered: new Map(), pluginTools: [], isAvailable: everything })).toEqual(['e1']);
  });

  it('has no dangling includes among the built-in toolsets', () => {
    for (const [name, toolset] of Object.entries(BUILTIN_TOOLSETS)) {
      expect(expandToolsets([name], BUILTIN_TOOLSETS).unknown, name).toEqual([]);
      expect(toolset.includes.every((include) => include in BUILTIN_TOOLSETS)).toBe(true);
    }
  });
});

describe('exposure from a profile policy', () => {
  const tool = (name: string, toolset: string, requiresEnv?: string[]) =>
    defineTool({
      name,
      toolset,
      description: name,
      guidance: '',
      schema: z.object({}),
      replaySafe: true,
      ...(requiresEnv ? { requiresEnv } : {}),
      execute: async () => 'ok',
    });
  const registry = new ToolRegistry()
    .register(tool('todo', 'todo'))
    .register(tool('memory', 'memory'))
    .register(tool('clarify', 'clarify'))
    .register(tool('terminal', 'terminal'))
    .register(tool('read_file', 'file'))
    .register(tool('web_extract', 'web', ['WEB_KEY']))
    .register(tool('jira', 'jira'));
  const exposure = new ToolExposure(registry, { pluginTools: ['jira'], env: {} });
  const policy = (value: unknown) => toolPolicySchema.parse(value);

  it('offers the platform default bundle, plugin tools, and only tools whose requirements are met', () => {
    expect(exposure.resolve({ policy: policy({}), platform: 'telegram', role: 'chat' })).toEqual(['clarify', 'jira', 'memory', 'read_file', 'terminal', 'todo']);
    const withKey = new ToolExposure(registry, { env: { WEB_KEY: 'k' } });
    expect(withKey.resolve({ policy: policy({}), platform: 'api', role: 'chat' })).toContain('web_extract');
  });

  it('lets a platform replace the enabled set and every level disable toolsets', () => {
    const p = policy({
      enabled: ['safe'],
      disabled: ['jira'],
      platforms: { discord: { enabled: ['todo', 'terminal'] }, api: { disabled: ['clarify'] } },
      users: { guest: { disabled: ['memory'] } },
    });
    expect(exposure.resolve({ policy: p, platform: 'discord', role: 'chat' })).toEqual(['terminal', 'todo']);
    expect(exposure.resolve({ policy: p, platform: 'api', role: 'chat' })).toEqual(['memory', 'todo']);
    // A bare key is the API's person (api:guest); the same bare id on another platform is someone else.
    expect(exposure.resolve({ policy: p, platform: 'api', role: 'chat', userId: 'api:guest' })).toEqual(['todo']);
    expect(exposure.resolve({ policy: p, platform: 'api', role: 'chat', userId: 'telegram:guest' })).toEqual(['memory', 'todo']);
  });

  it('uses the profile’s own toolsets, composed with the built-in ones', () => {
    const p = policy({ enabled: ['ops'], toolsets: { ops: { tools: ['jira'], includes: ['terminal', 'todo'] } } });
    expect(exposure.resolve({ policy: p, platform: 'api', role: 'chat' })).toEqual(['jira', 'terminal', 'todo']);
  });

  it('narrows background roles: cron loses clarify, review keeps memory and skills only', () => {
    expect(exposure.resolve({ policy: policy({}), platform: 'cron', role: 'cron' })).not.toContain('clarify');
    expect(exposure.resolve({ policy: policy({ enabled: ['clarify', 'todo'] }), platform: 'cron', role: 'cron', jobToolsets: ['clarify', 'todo'] })).toEqual(['jira', 'todo']);
    expect(exposure.resolve({ policy: policy({ enabled: ['*'] }), platform: 'api', role: 'review' })).toEqual(['memory']);
  });

  it('refuses malformed policies', () => {
    expect(toolPolicySchema.safeParse({ disabled: 'terminal' }).success).toBe(false);
    expect(toolPolicySchema.safeParse({ enabled: ['bad name!'] }).success).toBe(false);
    expect(toolPolicySchema.safeParse({ extra: true }).success).toBe(false);
  });
});
