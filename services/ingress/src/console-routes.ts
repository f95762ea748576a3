import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';
import fastifyStatic from '@fastify/static';

export const CONSOLE_PATH = '/ui/';

/**
 * The route patterns the console registers, built or not: public (PUBLIC_ROUTES), since they serve
 * only the static files, which hold no data; every call the page makes needs the token.
 */
export const CONSOLE_ROUTES: readonly string[] = ['/ui', '/ui/*'];

/**
 * Where `npm run build` writes the console (vite.config.ts). Taken from the repository root, three
 * directories up: the same from src/, from dist/ and from the CLI's bundle in cli/dist/bundle/.
 */
export const CONSOLE_DIR = fileURLToPath(new URL('../../../services/ingress/console/dist/', import.meta.url));

/**
 * Every console response carries it: scripts, styles and calls only from this origin, no inline
 * script or style, no frames, no forms posted anywhere (sign-in is handled in script, so a form that
 * slipped past it cannot put the token in a URL). Images also from `blob:`: a transcript's pictures
 * are fetched with the console's sign-in and shown from a blob the page made, never from another
 * origin or a data: URL.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
};

/**
 * The web console at /ui/: static files built once by Vite, no token needed to load them (they hold
 * no data); every action they take goes through the /v1 API with the token like the CLI.
 */
export function registerConsoleRoutes(app: FastifyInstance, dir: string = CONSOLE_DIR): void {
  app.get('/ui', async (_request, reply) => reply.headers(SECURITY_HEADERS).redirect(CONSOLE_PATH, 308));
  void app.register(
    async (scope) => {
      scope.addHook('onSend', async (_request, reply, payload) => {
        reply.headers(SECURITY_HEADERS);
        return payload;
      });
      scope.setNotFoundHandler(async (_request, reply) => reply.code(404).type('text/plain; charset=utf-8').send('not found'));
      if (!existsSync(dir)) {
        // A source checkout that never ran the build: say so instead of a bare 404.
        const notBuilt = async (_request: unknown, reply: FastifyReply) => reply.code(503).type('text/plain; charset=utf-8').send('the console is not built: run npm run build');
        // '/*' matches '/ui/' too, as the static plugin's wildcard route does.
        scope.get('/*', notBuilt);
        return;
      }
      await scope.register(fastifyStatic, { root: dir, prefix: '/', index: 'index.html', wildcard: true, dotfiles: 'deny', decorateReply: false, cacheControl: true, maxAge: 0 });
    },
    { prefix: '/ui' },
  );
}
