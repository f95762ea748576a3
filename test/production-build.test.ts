import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFile, spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import pg from 'pg';
import { withDefaultUser } from '@herald/db';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { HERALD_BUILT_BIN, HERALD_SOURCE_BIN, TEST_TOKEN, waitFor } from './support/stack.ts';
import { readImageStages } from './support/dockerfile.ts';
import { ADMIN_URL, createTestDatabase, uniquePrefix } from './support/test-database.ts';
import { startFakeOpenAI } from './support/fake-llm.ts';
import { startOtlpReceiver } from './support/otlp-receiver.ts';

const exec = promisify(execFile);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');

interface Workspace {
  dir: string;
  name: string;
  exports: { '@herald/source': string; types: string; default: string };
}

function workspaces(): Workspace[] {
  const dirs = ['libs', 'services'].flatMap((group) => readdirSync(join(ROOT, group)).map((name) => `${group}/${name}`));
  return [...dirs, 'cli'].map((dir) => {
    const manifest = JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8'));
    return { dir, name: manifest.name, exports: manifest.exports['.'] };
  });
}

function heraldImports(dir: string): string[] {
  const names = new Set<string>();
  const walk = (path: string) => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const full = join(path, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.ts')) {
        // A dynamic import(...) needs the package built first just the same.
        for (const match of readFileSync(full, 'utf8').matchAll(/(?:from |import\()'(@herald\/[a-z]+)'/g)) names.add(match[1]!);
      }
    }
  };
  walk(join(ROOT, dir, 'src'));
  return [...names].sort();
}

async function resolveIn(args: string[], specifier: string): Promise<string> {
  const { stdout } = await exec(process.execPath, [...args, '--input-type=module', '-e', `console.log(import.meta.resolve('${specifier}'))`], { cwd: ROOT });
  return stdout.trim();
}

beforeAll(async () => {
  // tsc -b is incremental: a tree that is already built costs a second or two. Only this file
  // builds, so no two test files write dist/ at once (the bundle, a few seconds, included).
  await exec(process.execPath, [TSC, '-b', 'tsconfig.build.json'], { cwd: ROOT });
  // The bundle cli/bin/herald.js runs, made from that dist/ as `npm run build` makes it.
  await exec(process.execPath, [join(ROOT, 'scripts/bundle.mjs')], { cwd: ROOT });
}, 180_000);

describe('the production build', () => {
  it('compiles every package to dist/ with source maps and declarations, where its exports point', () => {
    const packages = workspaces();
    expect(packages.length).toBeGreaterThanOrEqual(15);
    for (const { dir, exports } of packages) {
      expect(existsSync(join(ROOT, dir, exports['@herald/source'])), `${dir} source entry`).toBe(true);
      expect(existsSync(join(ROOT, dir, exports.default)), `${dir} compiled entry`).toBe(true);
      expect(existsSync(join(ROOT, dir, exports.types)), `${dir} declarations`).toBe(true);
      expect(existsSync(join(ROOT, dir, `${exports.default}.map`)), `${dir} source map`).toBe(true);
      // Relative imports were rewritten from .ts to .js, so node runs dist/ with no loader.
      expect(readFileSync(join(ROOT, dir, exports.default), 'utf8')).not.toMatch(/from '\.[^']*\.ts'/);
    }
  });

  it('builds each package after the packages it imports (tsconfig references mirror the imports)', () => {
    const byName = new Map(workspaces().map((workspace) => [workspace.name, workspace.dir]));
    for (const { dir, name } of workspaces()) {
      const config = JSON.parse(readFileSync(join(ROOT, dir, 'tsconfig.build.json'), 'utf8'));
      const referenced = (config.references as { path: string }[]).map((reference) => join(dir, reference.path, '..')).sort();
      const imported = heraldImports(dir)
        .filter((other) => other !== name)
        .map((other) => byName.get(other)!)
        .sort();
      expect(referenced, dir).toEqual(imported);
    }
  });

  it('resolves @herald/* to dist/ by default and to src/ under the @herald/source condition', async () => {
    expect(await resolveIn([], '@herald/core')).toMatch(/libs\/core\/dist\/index\.js$/);
    expect(await resolveIn(['--conditions=@herald/source'], '@herald/core')).toMatch(/libs\/core\/src\/index\.ts$/);
    // herald-dev.js adds the same condition through a resolve hook (it runs under plain node).
    const hook = new URL('../cli/bin/source-condition.js', import.meta.url).href;
    const viaHook = `import { register } from 'node:module'; register(${JSON.stringify(hook)}); console.log(import.meta.resolve('@herald/core'))`;
    const { stdout } = await exec(process.execPath, ['--input-type=module', '-e', viaHook], { cwd: ROOT });
    expect(stdout.trim()).toMatch(/libs\/core\/src\/index\.ts$/);
    // Vitest, which runs this file, loads the source module itself, not a compiled copy.
    const byName = await import('@herald/core');
    const bySourcePath = await import('../libs/core/src/index.ts');
    expect(byName.loadConfig).toBe(bySourcePath.loadConfig);
    // tsc's typecheck resolves the same way (tsconfig.json's customConditions).
    expect(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8')).toContain('"customConditions": ["@herald/source"]');
  });

  it('builds the web console with Vite in the same step, where the ingress serves it', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    expect(manifest.scripts.build).toBe('tsc -b tsconfig.build.json && node scripts/bundle.mjs && vite build --config services/ingress/console/vite.config.ts');
    const viteConfig = readFileSync(join(ROOT, 'services/ingress/console/vite.config.ts'), 'utf8');
    expect(viteConfig).toContain("outDir: 'dist'");
    expect(viteConfig).toContain("base: '/ui/'");
    // The ingress serves services/ingress/console/dist/ from src/, dist/ and the CLI's bundle alike.
    expect(readFileSync(join(ROOT, 'services/ingress/src/console-routes.ts'), 'utf8')).toContain("new URL('../../../services/ingress/console/dist/', import.meta.url)");
  });

  it('runs the compiled CLI with no TypeScript loader, and tsx is a development dependency only', async () => {
    const { stdout } = await exec(process.execPath, [HERALD_BUILT_BIN, 'help'], { cwd: ROOT });
    expect(stdout).toContain('usage: herald <command>');
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
    expect(lock.packages['node_modules/tsx'].dev).toBe(true);
    expect(readFileSync(HERALD_BUILT_BIN, 'utf8')).not.toContain('tsx');
    const fromSource = await exec(process.execPath, [HERALD_SOURCE_BIN, 'help'], { cwd: ROOT });
    expect(fromSource.stdout).toBe(stdout);
  });
});

describe('the compiled bundle with tracing and metrics on', () => {
  it('runs `herald up` with an OTLP endpoint: answers a turn, sends its spans to the collector and counts it on /metrics', async () => {
    // The bundle once lost the named exports of the tracing packages it import()s: this exact
    // command exited at once with "resourceFromAttributes is not a function".
    const receiver = await startOtlpReceiver();
    const model = await startFakeOpenAI({ handler: (request) => ({ text: `traced: ${request.lastUserText}` }) });
    const database = await createTestDatabase();
    const child = spawn(process.execPath, [HERALD_BUILT_BIN, 'up'], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: database.url,
        REDIS_URL: 'redis://127.0.0.1:6379',
        HERALD_QUEUE_PREFIX: uniquePrefix(),
        HERALD_API_TOKEN: TEST_TOKEN,
        PORT: '0',
        HERALD_METRICS_PORT: '0',
        HERALD_DB_POOL_SIZE: '4',
        HERALD_WORKSPACE_ROOT: join(tmpdir(), `herald-ws-${database.name}`),
        HERALD_MODEL: 'openai/gpt-test',
        OPENAI_BASE_URL: model.url,
        OPENAI_API_KEY: 'sk-test',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const started = await Promise.race([
        waitFor(async () => /Herald is up\. API on (\S+)/.exec(output)?.[1], { timeoutMs: 60_000, what: 'herald up' }),
        exited.then((code) => {
          throw new Error(`herald up exited with ${code}: ${output}`);
        }),
      ]);
      const url = started.replace('0.0.0.0', '127.0.0.1');
      const response = await fetch(`${url}/v1/messages?wait=20`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ chat_id: 'traced', user_id: 'u1', text: 'hello' }),
      });
      expect(response.status).toBe(200);
      expect(((await response.json()) as { reply: { text: string } }).reply.text).toBe('traced: hello');
      const spans = await waitFor(
        async () => {
          const turn = receiver.spans.find((span) => span.name === 'herald.turn');
          return turn && receiver.spans.some((span) => span.name === 'herald.model.call' && span.traceId === turn.traceId) ? receiver.spans : undefined;
        },
        { timeoutMs: 30_000, what: 'the turn and model call spans' },
      );
      expect(spans.find((span) => span.name === 'herald.turn')?.service).toBe('herald-up');
      const metrics = await (await fetch(`${url}/metrics`)).text();
      expect(metrics).toMatch(/^herald_turns_total\{[^}]*\} [1-9]/m);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
      await database.drop();
      await model.close();
      await receiver.close();
    }
  }, 120_000);
});

describe('the image (Dockerfile)', () => {
  const stages = readImageStages(join(ROOT, 'Dockerfile'));
  const image = stages.at(-1)!;

  it('builds in one stage and runs compiled JavaScript as a non-root user under tini in the next', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const stage of stages) expect(stage.from).toMatch(/^node:22-[a-z]+-slim$/);
    expect(stages[0]!.run).toContain('npm run build');
    // Every file the build script names comes into the build stage (a missing one fails the image build only).
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    const named = [...String(manifest.scripts.build).matchAll(/\S+\.(?:mjs|json|ts)\b/g)].map((match) => match[0]);
    expect(named.length).toBeGreaterThan(0);
    for (const file of named)
      expect(
        stages[0]!.copied.some((source) => file === source || file.startsWith(`${source}/`)),
        file,
      ).toBe(true);
    expect(stages[0]!.run).toContain('npm prune --omit=dev');
    // The console's built files stay in the image (its sources do not).
    expect(stages[0]!.run).toContain('services/ingress/console/src');
    expect(stages[0]!.run).not.toContain('console/dist');
    // What the roles read from the repository at run time: migrations and the built-in skills.
    for (const folder of ['migrations', 'skills']) expect(image.copied, folder).toContain(folder);
    expect(image.run).toMatch(/apt-get install[^\n]*\btini\b/);
    expect(image.run).toMatch(/apt-get install[^\n]*\bbubblewrap\b/);
    // The browser tools drive Debian's Chromium at HERALD_CHROMIUM_PATH's default; without it they are not offered.
    expect(image.run).toMatch(/apt-get install[^\n]*\bchromium\b/);
    expect(image.user).not.toMatch(/^(root|0)$/);
    // Metrics bind loopback unless asked; a container is scraped from outside, so the image asks.
    expect(image.env.HERALD_METRICS_HOST).toBe('0.0.0.0');
    expect(image.entrypoint.slice(0, 2)).toEqual(['/usr/bin/tini', '--']);
    expect(image.entrypoint).toContain('cli/bin/herald.js');
    expect([...image.entrypoint, ...image.cmd].join(' ')).not.toContain('tsx');
  });

  it("starts with the image's exact command line against the built tree, gets ready, and exits 0 on SIGTERM", async () => {
    // The repository root stands in for the image's WORKDIR; /usr/bin/tini is the Debian package.
    expect(image.workdir).toBe('/app');
    expect(existsSync(image.entrypoint[0]!), 'tini is installed (apt-get install tini)').toBe(true);
    const name = uniquePrefix();
    const databaseUrl = Object.assign(new URL(ADMIN_URL), { pathname: `/${name}` }).toString();
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      ...image.env,
      // The image's own directory does not exist outside it.
      HERALD_WORKSPACE_ROOT: join(tmpdir(), `herald-ws-${name}`),
      DATABASE_URL: databaseUrl,
      REDIS_URL: 'redis://127.0.0.1:6379',
      HERALD_QUEUE_PREFIX: name,
      HERALD_API_TOKEN: TEST_TOKEN,
      PORT: '0',
      HERALD_METRICS_PORT: '0',
      HERALD_DB_POOL_SIZE: '4',
    };
    const [command, ...args] = image.entrypoint;
    try {
      // The migration step (compose's migrate service, the k8s Job): same entry point, another command.
      await exec(command!, [...args, 'migrate'], { cwd: ROOT, env });
      const child = spawn(command!, [...args, ...image.cmd], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      const address = await waitFor(async () => /Herald is up\. API on (\S+)/.exec(output)?.[1], { timeoutMs: 60_000, what: 'herald up' });
      const ready = await fetch(`${address.replace('0.0.0.0', '127.0.0.1')}/readyz`);
      expect(ready.status).toBe(200);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(output).toContain('"msg":"shutting down"');
    } finally {
      const admin = new pg.Client({ connectionString: withDefaultUser(ADMIN_URL) });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
      await admin.end();
    }
  });
});
