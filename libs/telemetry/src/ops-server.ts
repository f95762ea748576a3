import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { registry } from './metrics.ts';

/** One dependency a role needs to do its work: resolves when it answers, rejects when it does not. */
export type ReadinessCheck = () => Promise<void>;

export interface OpsServer {
  /** The bound port (useful when asked for port 0). */
  port: number;
  close(): Promise<void>;
}

async function readiness(checks: Record<string, ReadinessCheck>): Promise<{ ready: boolean; body: Record<string, string> }> {
  const names = Object.keys(checks);
  const results = await Promise.allSettled(names.map((name) => checks[name]!()));
  const body: Record<string, string> = {};
  results.forEach((result, index) => {
    body[names[index]!] = result.status === 'fulfilled' ? 'ok' : String((result.reason as Error)?.message ?? result.reason);
  });
  const ready = results.every((result) => result.status === 'fulfilled');
  return { ready, body: { status: ready ? 'ready' : 'not_ready', ...body } };
}

/**
 * The small HTTP port of a role that has no API (worker, reviewer, scheduler): /metrics for
 * Prometheus, /healthz (the process answers: liveness) and /readyz (its Postgres and Redis answer:
 * readiness). Nothing else is served, and nothing here takes input beyond the path.
 */
export async function startOpsServer(options: { host: string; port: number; checks: Record<string, ReadinessCheck> }): Promise<OpsServer> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const send = (status: number, type: string, body: string) => {
      response.writeHead(status, { 'content-type': type }).end(body);
    };
    if (request.method !== 'GET') return send(405, 'application/json', '{"error":"method_not_allowed"}');
    if (path === '/healthz') return send(200, 'application/json', '{"status":"ok"}');
    if (path === '/readyz') {
      void readiness(options.checks).then(({ ready, body }) => send(ready ? 200 : 503, 'application/json', JSON.stringify(body)));
      return undefined;
    }
    if (path === '/metrics') {
      registry.metrics().then(
        (text) => send(200, registry.contentType, text),
        (error: Error) => send(500, 'text/plain', `metrics collection failed: ${error.message}\n`),
      );
      return undefined;
    }
    return send(404, 'application/json', '{"error":"not_found"}');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** For the ingress, which serves /metrics on its own HTTP port. */
export async function metricsText(): Promise<{ contentType: string; text: string }> {
  return { contentType: registry.contentType, text: await registry.metrics() };
}
