import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import * as oidc from 'openid-client';
import type { OidcConfig } from '@herald/core';

/**
 * The console's single sign-on as an OpenID relying party (openid-client): the authorization code
 * flow with PKCE (S256), a state and a nonce. What the browser must bring back (state, verifier,
 * nonce) travels in a short-lived cookie signed with a key derived from the client secret, so any
 * ingress replica can finish a sign-in another one started, with nothing stored meanwhile.
 */

/** What a finished sign-in proved about the person. */
export interface OidcIdentity {
  subject: string;
  email: string;
  name: string;
  /** The values of the configured role claim (a string claim counts as one value). */
  groups: string[];
}

/** A sign-in refused for a reason the person should read (a domain not allowed, an unverified address). */
export class SignInRefused extends Error {
  override readonly name = 'SignInRefused';
}

interface Pending {
  state: string;
  verifier: string;
  nonce: string;
  expires: number;
}

export const PENDING_SIGN_IN_MS = 10 * 60_000;

const b64 = (value: string) => Buffer.from(value).toString('base64url');

/** The claims userinfo gave a value (they fill what the ID token left out, never unset one). */
const pickDefined = (claims: Record<string, unknown>) => Object.fromEntries(Object.entries(claims).filter(([, value]) => value !== undefined && value !== null));

export class OidcClient {
  readonly #config: oidc.Configuration;
  readonly #settings: OidcConfig;
  readonly #redirectUri: string;
  readonly #key: Buffer;

  private constructor(config: oidc.Configuration, settings: OidcConfig, redirectUri: string) {
    this.#config = config;
    this.#settings = settings;
    this.#redirectUri = redirectUri;
    this.#key = Buffer.from(hkdfSync('sha256', settings.clientSecret, 'herald-oidc', 'pending sign-in', 32));
  }

  /** Reads the issuer's discovery document; plain http only for a loopback issuer (a test's or a laptop's). */
  static async discover(settings: OidcConfig, redirectUri: string): Promise<OidcClient> {
    const issuer = new URL(settings.issuer);
    const loopback = issuer.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(issuer.hostname);
    const config = await oidc.discovery(
      issuer,
      settings.clientId,
      { redirect_uris: [redirectUri] },
      oidc.ClientSecretBasic(settings.clientSecret),
      loopback ? { execute: [oidc.allowInsecureRequests] } : undefined,
    );
    return new OidcClient(config, settings, redirectUri);
  }

  /** Where to send the browser, and the signed cookie value that must come back with it. */
  async start(): Promise<{ url: string; cookie: string }> {
    const pending: Pending = { state: oidc.randomState(), verifier: oidc.randomPKCECodeVerifier(), nonce: oidc.randomNonce(), expires: Date.now() + PENDING_SIGN_IN_MS };
    const url = oidc.buildAuthorizationUrl(this.#config, {
      redirect_uri: this.#redirectUri,
      scope: this.#scope(),
      code_challenge: await oidc.calculatePKCECodeChallenge(pending.verifier),
      code_challenge_method: 'S256',
      state: pending.state,
      nonce: pending.nonce,
    });
    return { url: url.href, cookie: this.#sign(pending) };
  }

  /** Exchanges the code the browser brought back; throws SignInRefused for a person who may not sign in. */
  async finish(callbackUrl: URL, cookie: string | undefined): Promise<OidcIdentity> {
    const pending = cookie === undefined ? undefined : this.#verify(cookie);
    if (!pending) throw new SignInRefused('the sign-in expired or was started in another browser: start again');
    const tokens = await oidc.authorizationCodeGrant(this.#config, callbackUrl, { pkceCodeVerifier: pending.verifier, expectedState: pending.state, expectedNonce: pending.nonce });
    const idToken = tokens.claims();
    if (!idToken) throw new SignInRefused('the provider sent no ID token');
    // Many providers keep the e-mail and groups out of the ID token and serve them at userinfo,
    // for the subject the ID token names (openid-client checks it is the same).
    const userInfo = await oidc.fetchUserInfo(this.#config, tokens.access_token, idToken.sub);
    const claims: Record<string, unknown> = { ...idToken, ...pickDefined(userInfo) };
    return this.#identity({ ...claims, sub: idToken.sub });
  }

  #identity(claims: Readonly<Record<string, unknown>> & { sub: string }): OidcIdentity {
    const email = typeof claims.email === 'string' ? claims.email.toLowerCase() : '';
    if (email === '' || claims.email_verified === false) throw new SignInRefused('the provider vouched for no verified e-mail address');
    const domain = email.slice(email.lastIndexOf('@') + 1);
    if (this.#settings.allowedDomains.length > 0 && !this.#settings.allowedDomains.includes(domain)) {
      throw new SignInRefused(`addresses at ${domain} may not sign in here (HERALD_OIDC_ALLOWED_DOMAINS)`);
    }
    const raw = claims[this.#settings.roleClaim];
    const groups = Array.isArray(raw) ? raw.filter((value): value is string => typeof value === 'string') : typeof raw === 'string' ? [raw] : [];
    const name = typeof claims.name === 'string' && claims.name.trim() !== '' ? claims.name.trim() : email;
    return { subject: claims.sub, email, name, groups };
  }

  /** The role claim's scope too when the provider offers one of that name (`groups` at most providers). */
  #scope(): string {
    const offered = this.#config.serverMetadata().scopes_supported ?? [];
    return ['openid', 'email', 'profile', ...(offered.includes(this.#settings.roleClaim) ? [this.#settings.roleClaim] : [])].join(' ');
  }

  #sign(pending: Pending): string {
    const body = b64(JSON.stringify(pending));
    return `${body}.${createHmac('sha256', this.#key).update(body).digest('base64url')}`;
  }

  #verify(cookie: string): Pending | undefined {
    const [body, mac] = cookie.split('.');
    if (!body || !mac) return undefined;
    const expected = createHmac('sha256', this.#key).update(body).digest();
    const given = Buffer.from(mac, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    const pending = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Pending;
    return pending.expires > Date.now() ? pending : undefined;
  }
}
