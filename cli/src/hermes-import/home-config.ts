import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { isValidTimeZone } from '@herald/cron';
import { readRegularFile } from '../safe-files.ts';
import { HomeError } from './home-error.ts';

const CONFIG_MAX_BYTES = 1024 * 1024;

/**
 * The zone the home's cron times are read in, as Hermes reads it: --timezone when given, else
 * HERMES_TIMEZONE (which Hermes lets override the file), else config.yaml's `timezone`, else UTC.
 * A config.yaml that is not YAML, or a zone that is not one, refuses the home, naming it.
 */
export async function homeTimezone(home: string, given: { timezone?: string | undefined; envTimezone?: string | undefined }): Promise<{ zone: string; from: string }> {
  if (given.timezone) return { zone: given.timezone, from: '--timezone' };
  const env = given.envTimezone?.trim();
  if (env) {
    if (!isValidTimeZone(env)) throw new HomeError(`HERMES_TIMEZONE: '${env}' is not an IANA time zone`);
    return { zone: env, from: 'HERMES_TIMEZONE' };
  }
  const path = join(home, 'config.yaml');
  const bytes = await readRegularFile(path, CONFIG_MAX_BYTES);
  if (bytes === undefined) return { zone: 'UTC', from: 'default' };
  const document = parseDocument(bytes.toString('utf8'));
  const problem = document.errors[0];
  if (problem !== undefined) throw new HomeError(`${path}: line ${problem.linePos?.[0]?.line ?? '?'}: ${problem.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`);
  const config = document.toJS({ maxAliasCount: 100 }) as unknown;
  const zone = config !== null && typeof config === 'object' ? (config as { timezone?: unknown }).timezone : undefined;
  if (zone === undefined || zone === null || (typeof zone === 'string' && zone.trim() === '')) return { zone: 'UTC', from: 'default' };
  if (typeof zone !== 'string' || !isValidTimeZone(zone.trim())) throw new HomeError(`${path}: field timezone: '${String(zone)}' is not an IANA time zone`);
  return { zone: zone.trim(), from: 'config.yaml' };
}
