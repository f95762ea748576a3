import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '@herald/core';
import { TEST_TOKEN } from './support/stack.ts';

const ROLES = ['ingress', 'worker', 'reviewer', 'scheduler'];
const compose = parse(readFileSync(new URL('../deploy/compose.yaml', import.meta.url), 'utf8'), { merge: true });
const services: Record<string, any> = compose.services;

/** Compose's interpolation: ${VAR:-default} takes the default, ${VAR:?message} a sample value. */
function interpolate(environment: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(environment)
      .map(([name, value]) => [
        name,
        String(value)
          .replace(/\$\{[A-Z_]+:\?[^}]*\}/g, TEST_TOKEN)
          .replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1'),
      ])
      .filter(([, value]) => value !== ''),
  );
}

describe('deploy/compose.yaml', () => {
  it('runs Postgres, Redis, a migration step and every role from one image', () => {
    expect(Object.keys(services).sort()).toEqual(['ingress', 'migrate', 'postgres', 'redis', 'reviewer', 'scheduler', 'worker']);
    for (const name of ['migrate', ...ROLES]) {
      expect(services[name].image, name).toBe(services.ingress.image);
      expect(services[name].build, name).toEqual({ context: '..', dockerfile: 'Dockerfile' });
      expect(services[name].command, name).toEqual([name]);
      expect(services[name].read_only, name).toBe(true);
      expect(services[name].cap_drop, name).toEqual(['ALL']);
    }
    expect(services.worker.deploy.replicas).toBe(2);
    expect(services.migrate.depends_on.postgres.condition).toBe('service_healthy');
  });

  it('starts each role after the migration finished, and gives it the shutdown deadline to stop', () => {
    for (const role of ROLES) {
      expect(services[role].depends_on.migrate.condition, role).toBe('service_completed_successfully');
      const deadlineMs = Number(services[role].environment.HERALD_SHUTDOWN_TIMEOUT_MS);
      expect(Number.parseInt(services[role].stop_grace_period, 10) * 1000, role).toBeGreaterThan(deadlineMs);
    }
  });

  it('gives each role a configuration herald accepts and only the secrets that role uses', () => {
    for (const name of ['migrate', ...ROLES]) {
      expect(() => loadConfig(interpolate(services[name].environment)), name).not.toThrow();
    }
    const secrets = (name: string) =>
      Object.keys(services[name].environment)
        .filter((key) => /TOKEN|API_KEY/.test(key))
        .sort();
    expect(secrets('ingress')).toEqual(['DISCORD_BOT_TOKEN', 'HERALD_API_TOKEN', 'TELEGRAM_BOT_TOKEN']);
    // The worker sends the outbox (platform tokens) and calls the model (provider keys).
    expect(secrets('worker')).toEqual(['ANTHROPIC_API_KEY', 'DISCORD_BOT_TOKEN', 'OPENAI_API_KEY', 'TELEGRAM_BOT_TOKEN']);
    expect(secrets('reviewer')).toEqual(['ANTHROPIC_API_KEY', 'OPENAI_API_KEY']);
    expect(secrets('scheduler')).toEqual([]);
    expect(secrets('migrate')).toEqual([]);
  });

  it("checks each role's health on the port it serves it", () => {
    const probed = (name: string) => /127\.0\.0\.1:(\d+)\/readyz/.exec(services[name].healthcheck.test.join(' '))?.[1];
    expect(probed('ingress')).toBe(services.ingress.environment.PORT);
    for (const role of ['worker', 'reviewer', 'scheduler']) {
      expect(probed(role), role).toBe(services[role].environment.HERALD_METRICS_PORT);
      // Scraped from the compose network: all interfaces here, loopback by default.
      expect(services[role].environment.HERALD_METRICS_HOST, role).toBe('0.0.0.0');
    }
  });
});
