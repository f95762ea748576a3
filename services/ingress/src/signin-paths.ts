/**
 * The sign-in routes anyone may call: what the sign-in page offers, signing in with a token (the
 * token is in the body), and the single sign-on redirect and its callback. Who is signed in and
 * signing out need a session (route-permissions.ts).
 */
export const PUBLIC_SIGN_IN_ROUTES: readonly string[] = ['/v1/auth/methods', '/v1/auth/sign-in', '/v1/auth/oidc/login', '/v1/auth/oidc/callback'];
