import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/**
 * A real OpenID provider (the oidc-provider package) for sign-in tests: one confidential client,
 * PKCE required, and its development login form, where any login works and the account's claims come
 * from `accounts` (an unknown login gets an address at example.com). The browser test fills the
 * form as a person would.
 */
export interface OidcIssuer {
  url: string;
  clientId: string;
  clientSecret: string;
  close(): Promise<void>;
}

export interface IssuerAccount {
  email: string;
  name?: string;
  groups?: string[];
}

/**
 * `redirectUri` is read at the first request, so the issuer can start before the Herald it serves
 * (Herald's address is known only once it listens).
 */
export async function startOidcIssuer(redirectUri: () => string, accounts: Record<string, IssuerAccount> = {}): Promise<OidcIssuer> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'herald-console';
  const clientSecret = 'issuer-test-secret-0123456789';
  const provider = (): Provider =>
    new Provider(url, {
      clients: [{ client_id: clientId, client_secret: clientSecret, redirect_uris: [redirectUri()], grant_types: ['authorization_code'], response_types: ['code'] }],
      claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'], groups: ['groups'] },
      scopes: ['openid', 'email', 'profile', 'groups'],
      pkce: { required: () => true },
      cookies: { keys: ['issuer-test-cookie-key'] },
      features: { devInteractions: { enabled: true } },
      async findAccount(_ctx: unknown, sub: string) {
        const account = accounts[sub] ?? { email: `${sub}@example.com` };
        return {
          accountId: sub,
          async claims() {
            return { sub, email: account.email, email_verified: true, name: account.name ?? sub, groups: account.groups ?? [] };
          },
        };
      },
    });
  let handler: ReturnType<Provider['callback']> | undefined;
  server.on('request', (request, response) => {
    handler ??= provider().callback();
    void handler(request, response);
  });
  return {
    url,
    clientId,
    clientSecret,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
