import type { FastifyInstance } from 'fastify';

const SWEEP_MS = 100;

/**
 * Closes the ingress's HTTP server for a shutdown. Fastify closes the idle keep-alive connections
 * once, when the close starts; a connection whose request was still running then goes idle after
 * its response but stays open until the keep-alive timeout (72 s in Fastify), and the server's close
 * waits for it: past the shutdown deadline, an exit code of 1 in every rolling update with a
 * keep-alive client (a load balancer, a proxy). Sweeping the idle connections until the close ends
 * lets every running request finish and then closes its connection.
 */
export async function closeIngressServer(app: FastifyInstance): Promise<void> {
  const sweep = setInterval(() => app.server.closeIdleConnections(), SWEEP_MS);
  try {
    await app.close();
  } finally {
    clearInterval(sweep);
  }
}
