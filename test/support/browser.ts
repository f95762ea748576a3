import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import type { Browser } from 'playwright-core';

const exec = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Debian's chromium package (.ci/run installs it); playwright-core drives it, nothing is downloaded. */
export const CHROMIUM = '/usr/bin/chromium';

/** The console as `npm run build` builds it, into services/ingress/console/dist/ where the ingress serves it. */
export async function buildConsole(): Promise<void> {
  await exec(process.execPath, [fileURLToPath(new URL('../../node_modules/vite/bin/vite.js', import.meta.url)), 'build', '--config', 'services/ingress/console/vite.config.ts'], { cwd: ROOT });
}

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium (see .ci/run)`);
  // --no-sandbox: CI runs as root, where Chromium's own sandbox refuses to start.
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}
