import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '@herald/core';
import { HookRegistry, HooksFileError, HookSet } from '@herald/hooks';
import type { Db } from '@herald/db';

const dir = mkdtempSync(join(tmpdir(), 'herald-hooks-unit-'));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

file('block.mjs', `export default function register(ctx) { ctx.on('pre_tool_call', (e) => e.tool_name === 'terminal' ? { action: 'block', message: 'no terminal' } : undefined); }`);
file('approve.mjs', `export default function register(ctx) { ctx.on('pre_tool_call', () => ({ action: 'approve', message: 'ask first' })); }`);
file('hang.mjs', `export default function register(ctx) { ctx.on('pre_tool_call', () => new Promise(() => {})); }`);
file('throws.mjs', `export default function register(ctx) { ctx.on('pre_tool_call', () => { throw new Error('boom'); }); }`);
file('wrong.mjs', `export default function register(ctx) { ctx.on('post_tool_call', () => undefined); }`);

/** A set over the file's hooks; no url hooks here, so no database is touched. */
async function setOf(path: string): Promise<HookSet> {
  const registry = await HookRegistry.fromFile(path);
  return new HookSet(registry.hooksFor('main'), { db: undefined as unknown as Db, logger: silentLogger, commands: null });
}

describe('HERALD_HOOKS_FILE', () => {
  it('loads YAML and JSON, keeping file order and the defaults', async () => {
    const yaml = file(
      'ok.yaml',
      'hooks:\n  - name: guard\n    event: pre_tool_call\n    module: ./block.mjs\n  - name: audit-sink\n    event: post_tool_call\n    url: https://siem.example.com/herald\n    profiles: [ops]\n',
    );
    const registry = await HookRegistry.fromFile(yaml);
    expect(registry.hooksFor('main').map((hook) => hook.spec.name)).toEqual(['guard']);
    expect(registry.hooksFor('ops').map((hook) => [hook.spec.name, hook.spec.timeout_ms, hook.spec.on_error])).toEqual([
      ['guard', 2000, 'open'],
      ['audit-sink', 2000, 'open'],
    ]);
    const json = file('ok.json', JSON.stringify({ hooks: [{ name: 'c', event: 'cron_fire', command: ['/bin/cat'], timeout_ms: 500, on_error: 'closed' }] }));
    expect((await HookRegistry.fromFile(json)).hooksFor('main')[0]?.spec).toMatchObject({ command: ['/bin/cat'], timeout_ms: 500, on_error: 'closed' });
  });

  it.each([
    ['an unknown event', 'hooks:\n  - name: a\n    event: pre_everything\n    module: ./block.mjs\n', /hooks\.0\.event: expected one of pre_gateway_dispatch/],
    ['two kinds at once', 'hooks:\n  - name: a\n    event: pre_tool_call\n    module: ./block.mjs\n    url: https://x.example.com\n', /hooks\.0/],
    ['a plain http url to another host', 'hooks:\n  - name: a\n    event: post_tool_call\n    url: http://siem.example.com/\n', /expected an https:\/\/ URL/],
    ['a duplicate name', 'hooks:\n  - name: a\n    event: cron_fire\n    command: [/bin/true]\n  - name: a\n    event: cron_fire\n    command: [/bin/true]\n', /duplicate hook name 'a'/],
    ['a module that does not exist', 'hooks:\n  - name: a\n    event: pre_tool_call\n    module: ./missing.mjs\n', /hook 'a': cannot load module/],
    ['a module without a handler for the event', 'hooks:\n  - name: a\n    event: pre_tool_call\n    module: ./wrong.mjs\n', /registered no handler for 'pre_tool_call' \(only for post_tool_call\)/],
    ['broken YAML', 'hooks: [\n', /is not valid YAML/],
  ])('refuses %s with the reason', async (_what, text, reason) => {
    const path = file(`bad-${Math.random().toString(16).slice(2)}.yaml`, text);
    const error = await HookRegistry.fromFile(path).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(HooksFileError);
    expect((error as Error).message).toMatch(reason);
  });
});

describe('firing hooks', () => {
  const call = { tool_name: 'terminal', tool_input: { command: 'ls' } };

  it('runs hooks in file order and the first directive wins', async () => {
    const set = await setOf(file('order.yaml', 'hooks:\n  - name: first\n    event: pre_tool_call\n    module: ./block.mjs\n  - name: second\n    event: pre_tool_call\n    module: ./approve.mjs\n'));
    expect((await set.fire('pre_tool_call', call)).directive).toEqual({ action: 'block', message: 'no terminal' });
    expect((await set.fire('pre_tool_call', { tool_name: 'memory' })).directive).toEqual({ action: 'approve', message: 'ask first' });
  });

  it('cuts a hanging hook at its timeout: closed blocks with the reason, open goes on', async () => {
    const set = await setOf(
      file(
        'hang.yaml',
        'hooks:\n  - name: stuck-open\n    event: pre_tool_call\n    module: ./hang.mjs\n    timeout_ms: 50\n  - name: stuck-closed\n    event: pre_tool_call\n    module: ./hang.mjs\n    timeout_ms: 50\n    on_error: closed\n',
      ),
    );
    const fired = await set.fire('pre_tool_call', call);
    expect(fired.decisions.map((d) => [d.hook, d.outcome, d.onError])).toEqual([
      ['stuck-open', 'failed', 'open'],
      ['stuck-closed', 'failed', 'closed'],
    ]);
    expect(fired.directive?.action).toBe('block');
    expect(fired.directive && 'message' in fired.directive ? fired.directive.message : '').toMatch(/policy hook 'stuck-closed'.*timed out after 50 ms/);
  });

  it('treats a throwing hook like a timeout, per its on_error', async () => {
    const open = await setOf(file('throw-open.yaml', 'hooks:\n  - name: t\n    event: pre_tool_call\n    module: ./throws.mjs\n'));
    expect((await open.fire('pre_tool_call', call)).directive).toBeNull();
    const closed = await setOf(file('throw-closed.yaml', 'hooks:\n  - name: t\n    event: pre_tool_call\n    module: ./throws.mjs\n    on_error: closed\n'));
    expect((await closed.fire('pre_tool_call', call)).directive).toMatchObject({ action: 'block' });
  });
});
