import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { Deployment } from 'kubernetes-models/apps/v1';
import { ConfigMap, PersistentVolumeClaim, Secret, Service, ServiceAccount } from 'kubernetes-models/v1';
import { Job } from 'kubernetes-models/batch/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { ScaledObject, TriggerAuthentication } from '@kubernetes-models/keda/keda.sh/v1alpha1';
import { loadConfig } from '@herald/core';
import { createRedis, createRunQueue, enqueueWake, RUNS_QUEUE } from '@herald/queue';
import { acceptInbound } from '@herald/inbox';
import { kustomizeBuild } from './support/kustomize.ts';
import type { Manifest } from './support/kustomize.ts';
import { createTestDatabase, uniquePrefix } from './support/test-database.ts';

const K8S = fileURLToPath(new URL('../deploy/k8s/', import.meta.url));
const ROLES = ['ingress', 'worker', 'reviewer', 'scheduler'];
const MODELS: Record<string, new (data: any) => { validate(): void }> = {
  'apps/v1/Deployment': Deployment,
  'v1/ConfigMap': ConfigMap,
  'v1/PersistentVolumeClaim': PersistentVolumeClaim,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'v1/ServiceAccount': ServiceAccount,
  'batch/v1/Job': Job,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'keda.sh/v1alpha1/ScaledObject': ScaledObject,
  'keda.sh/v1alpha1/TriggerAuthentication': TriggerAuthentication,
};
// Which secrets each role's pods get (the table in deploy/k8s/base/kustomization.yaml).
const SECRETS: Record<string, string[]> = {
  ingress: ['herald-api', 'herald-database', 'herald-platforms', 'herald-redis'],
  worker: ['herald-database', 'herald-model', 'herald-platforms', 'herald-redis'],
  reviewer: ['herald-database', 'herald-model', 'herald-redis'],
  scheduler: ['herald-database', 'herald-redis'],
  migrate: ['herald-database'],
};

const temporary: string[] = [];
afterAll(() => {
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

/** prod plus the Postgres-queue component, as an overlay that adds it would build. */
function withPostgresQueueScaling(): string {
  const dir = mkdtempSync(join(tmpdir(), 'herald-kustomize-'));
  temporary.push(dir);
  const component = relative(dir, join(K8S, 'components/postgres-queue-scaling'));
  writeFileSync(
    join(dir, 'kustomization.yaml'),
    `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [${relative(dir, join(K8S, 'overlays/prod'))}]\ncomponents: [${component}]\n`,
  );
  return dir;
}

const builds: Record<string, Manifest[]> = {
  base: kustomizeBuild(join(K8S, 'base')),
  dev: kustomizeBuild(join(K8S, 'overlays/dev')),
  prod: kustomizeBuild(join(K8S, 'overlays/prod')),
  'prod + postgres-queue-scaling': kustomizeBuild(withPostgresQueueScaling()),
};

const find = (manifests: Manifest[], kind: string, name: string) => manifests.find((m) => m.kind === kind && m.metadata.name === name);
const podOf = (manifest: Manifest) => manifest.spec.template.spec;
const secretsOf = (pod: any) =>
  (pod.containers[0].envFrom as any[])
    .filter((source) => source.secretRef)
    .map((source) => source.secretRef.name)
    .sort();
const configOf = (manifests: Manifest[]) => find(manifests, 'ConfigMap', 'herald-config')!.data as Record<string, string>;

describe.each(Object.entries(builds))('deploy/k8s: %s', (_name, manifests) => {
  it('builds into objects that validate against the Kubernetes and KEDA schemas', () => {
    expect(manifests.length).toBeGreaterThan(15);
    for (const manifest of manifests) {
      const Model = MODELS[`${manifest.apiVersion}/${manifest.kind}`];
      expect(Model, `${manifest.apiVersion} ${manifest.kind} is a known kind`).toBeDefined();
      expect(() => new Model!(manifest).validate(), `${manifest.kind}/${manifest.metadata.name}`).not.toThrow();
    }
    const names = manifests.map((m) => `${m.kind}/${m.metadata.name}`);
    expect(new Set(names).size).toBe(names.length);
  });

  it('runs one image as one Deployment per role, with the shutdown deadline as grace period', () => {
    const config = configOf(manifests);
    const images = new Set<string>();
    for (const role of ROLES) {
      const deployment = find(manifests, 'Deployment', `herald-${role}`)!;
      const pod = podOf(deployment);
      expect(pod.containers).toHaveLength(1);
      expect(pod.containers[0].args).toEqual([role]);
      images.add(pod.containers[0].image);
      expect(pod.terminationGracePeriodSeconds, role).toBe(Number(config.HERALD_SHUTDOWN_TIMEOUT_MS) / 1000 + 10);
      expect(secretsOf(pod), role).toEqual(SECRETS[role]);
      expect(deployment.spec.selector.matchLabels).toEqual({ app: 'herald', role });
    }
    const job = find(manifests, 'Job', 'herald-migrate')!;
    expect(job.spec.template.spec.containers[0].args).toEqual(['migrate']);
    expect(secretsOf(job.spec.template.spec)).toEqual(SECRETS.migrate);
    images.add(job.spec.template.spec.containers[0].image);
    expect(images.size).toBe(1);
  });

  it('locks every pod down: non-root, read-only root, no capabilities, RuntimeDefault seccomp, no API token', () => {
    const pods = [...ROLES.map((role) => podOf(find(manifests, 'Deployment', `herald-${role}`)!)), find(manifests, 'Job', 'herald-migrate')!.spec.template.spec];
    for (const pod of pods) {
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } });
      expect(pod.automountServiceAccountToken).toBe(false);
      const container = pod.containers[0];
      expect(container.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
      // The read-only root leaves /tmp writable through an emptyDir.
      const tmp = container.volumeMounts.find((mount: any) => mount.mountPath === '/tmp');
      expect(pod.volumes.find((volume: any) => volume.name === tmp.name).emptyDir).toBeDefined();
      expect(container.resources.requests.cpu && container.resources.requests.memory && container.resources.limits.memory).toBeTruthy();
    }
    const worker = podOf(find(manifests, 'Deployment', 'herald-worker')!);
    const workspaces = worker.volumes.find((volume: any) => volume.persistentVolumeClaim)?.persistentVolumeClaim.claimName;
    expect(find(manifests, 'PersistentVolumeClaim', workspaces)).toBeDefined();
  });

  it("probes each role's health endpoints on the port it serves them, and guards it with a PDB", () => {
    const config = configOf(manifests);
    for (const role of ROLES) {
      const container = podOf(find(manifests, 'Deployment', `herald-${role}`)!).containers[0];
      const port = (name: string) => container.ports.find((p: any) => p.name === name)?.containerPort;
      expect(port(container.readinessProbe.httpGet.port), role).toBe(Number(role === 'ingress' ? config.PORT : config.HERALD_METRICS_PORT));
      // The probes come to the pod's IP: metrics bind all interfaces here (loopback by default).
      expect(role === 'ingress' ? config.HOST : config.HERALD_METRICS_HOST, role).toBe('0.0.0.0');
      expect([container.startupProbe.httpGet.path, container.livenessProbe.httpGet.path, container.readinessProbe.httpGet.path]).toEqual(['/healthz', '/healthz', '/readyz']);
      const budget = find(manifests, 'PodDisruptionBudget', `herald-${role}`)!;
      expect(budget.spec.selector.matchLabels).toEqual({ app: 'herald', role });
    }
    const api = find(manifests, 'Service', 'herald-api')!;
    expect(api.spec.selector).toEqual({ app: 'herald', role: 'ingress' });
    expect(api.spec.ports[0].targetPort).toBe('http');
  });

  it('denies all traffic by default and lets only the worker and reviewer reach public addresses', () => {
    const policies = manifests.filter((m) => m.kind === 'NetworkPolicy');
    const deny = policies.find((p) => p.metadata.name === 'herald-default-deny')!;
    expect(deny.spec).toEqual({ podSelector: { matchLabels: { app: 'herald' } }, policyTypes: ['Ingress', 'Egress'] });
    for (const role of ['worker', 'reviewer']) {
      const policy = policies.find((p) => p.metadata.name === `herald-${role}`)!;
      const blocks = policy.spec.egress.flatMap((rule: any) => rule.to ?? []).map((to: any) => to.ipBlock);
      expect(blocks.length, role).toBeGreaterThan(0);
      for (const block of blocks) expect(block.except).toEqual(expect.arrayContaining(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16']));
    }
    const scheduler = policies.find((p) => p.metadata.name === 'herald-scheduler')!;
    expect(scheduler.spec.policyTypes).toEqual(['Ingress']);
  });

  it('scales the workers with KEDA, never below one (they also send the outbox)', () => {
    const scaled = find(manifests, 'ScaledObject', 'herald-worker')!;
    expect(find(manifests, 'Deployment', scaled.spec.scaleTargetRef.name)).toBeDefined();
    expect(scaled.spec.minReplicaCount).toBeGreaterThanOrEqual(1);
    for (const trigger of scaled.spec.triggers) {
      if (trigger.authenticationRef) expect(find(manifests, 'TriggerAuthentication', trigger.authenticationRef.name)).toBeDefined();
    }
  });
});

describe('deploy/k8s overlays', () => {
  it('dev brings every secret the roles reference; prod brings none and pins its image', () => {
    // herald-platforms is optional: a cluster without Telegram or Discord has none.
    const required = new Set(
      Object.values(SECRETS)
        .flat()
        .filter((name) => name !== 'herald-platforms'),
    );
    for (const name of required) expect(find(builds.dev!, 'Secret', name), name).toBeDefined();
    expect(builds.prod!.filter((m) => m.kind === 'Secret')).toEqual([]);
    expect(builds.dev!.every((m) => m.metadata.namespace === 'herald-dev')).toBe(true);
    expect(builds.prod!.every((m) => m.metadata.namespace === 'herald')).toBe(true);
    expect(podOf(find(builds.prod!, 'Deployment', 'herald-worker')!).containers[0].image).toBe('ghcr.io/herald/herald:0.1.0');
    expect(podOf(find(builds.dev!, 'Deployment', 'herald-worker')!).containers[0].image).toBe('herald:dev');
    // Patches merge containers by name: prod's worker sizing keeps the base's probes and mounts.
    const worker = podOf(find(builds.prod!, 'Deployment', 'herald-worker')!).containers[0];
    expect(worker.resources.requests.memory).toBe('384Mi');
    expect(worker.readinessProbe.httpGet.path).toBe('/readyz');
  });

  it('counts the Redis list BullMQ really keeps a waiting wake-up in', async () => {
    const trigger = find(builds.base!, 'ScaledObject', 'herald-worker')!.spec.triggers[0];
    expect(trigger.type).toBe('redis');
    expect(trigger.metadata.listName).toBe(`${loadConfig({}).redis.queuePrefix}:${RUNS_QUEUE}:wait`);
    const prefix = uniquePrefix();
    const redis = createRedis('redis://127.0.0.1:6379', 'producer');
    const queue = createRunQueue(redis, prefix);
    try {
      await enqueueWake(queue, '00000000-0000-4000-8000-000000000001', '1');
      const key = trigger.metadata.listName.replace(/^herald:/, `${prefix}:`);
      expect(await redis.llen(key)).toBe(1);
    } finally {
      await queue.obliterate({ force: true });
      await queue.close();
      redis.disconnect();
    }
  });

  it('counts the unanswered inbox in Postgres-queue mode', async () => {
    const scaled = find(builds['prod + postgres-queue-scaling']!, 'ScaledObject', 'herald-worker')!;
    expect(scaled.spec.triggers.map((t: any) => t.type)).toEqual(['postgresql']);
    const database = await createTestDatabase();
    try {
      const count = async () => Number(((await sql.raw(scaled.spec.triggers[0].metadata.query).execute(database.db)).rows[0] as any).count);
      expect(await count()).toBe(0);
      await acceptInbound(database.db, { profileId: 'main', platform: 'api', chatType: 'dm', chatId: 'k', userId: 'api:u', text: 'hello' }, { backlogLimit: 10 });
      expect(await count()).toBe(1);
    } finally {
      await database.drop();
    }
  });
});
