import { z } from 'zod';
import { integer, optionalText, url } from './fields.ts';

/** The HTTP API: where it listens, who may call it, and where `herald chat` finds it. */
export interface ApiConfig {
  host: string;
  port: number;
  /** The bearer token callers present; undefined: the API is open (and listens on loopback). */
  token: string | undefined;
  /** Where `herald chat` and the other client commands find the API; defaults to this machine's PORT. */
  url: string;
}

export const apiSection = z
  .object({
    HOST: optionalText,
    PORT: integer(0, 65535).default(8080),
    HERALD_API_TOKEN: optionalText.refine((value) => value === undefined || value.length >= 8, {
      error: 'expected at least 8 characters',
    }),
    HERALD_URL: optionalText.pipe(url(/^https?:$/, 'http://127.0.0.1:8080').optional()),
  })
  .transform((e): ApiConfig => ({
    // Without a token the API is open, so it only listens on loopback unless HOST says otherwise.
    host: e.HOST ?? (e.HERALD_API_TOKEN === undefined ? '127.0.0.1' : '0.0.0.0'),
    port: e.PORT,
    token: e.HERALD_API_TOKEN,
    url: e.HERALD_URL ?? `http://127.0.0.1:${e.PORT}`,
  }));

/** True for an address only this machine can reach: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return bare === 'localhost' || bare === '::1' || /^127(\.\d{1,3}){3}$/.test(bare) || /^::ffff:127(\.\d{1,3}){3}$/.test(bare);
}
