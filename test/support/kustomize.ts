import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';

/**
 * `kustomize build` for the subset of Kustomize that deploy/k8s uses, so the suite can build every
 * overlay offline (no kustomize binary is packaged for this machine). Anything outside the subset
 * is refused rather than ignored: resources (files and directories), components, namespace,
 * labels (metadata only, as `labels: [{pairs}]` without includeSelectors), images, secretGenerator
 * (literals, with disableNameSuffixHash) and strategic-merge `patches` by path, one document each.
 */
export type Manifest = Record<string, any> & { apiVersion: string; kind: string; metadata: { name: string; [key: string]: any } };

const SUPPORTED = new Set(['apiVersion', 'kind', 'resources', 'components', 'namespace', 'labels', 'images', 'secretGenerator', 'generatorOptions', 'patches']);

// Strategic-merge keys of the built-in lists deploy/k8s patches; other lists (and every list of a
// custom resource such as KEDA's) are replaced whole, as Kustomize does without a schema.
const MERGE_KEYS: Record<string, string> = { containers: 'name', initContainers: 'name', env: 'name', volumes: 'name', volumeMounts: 'mountPath', ports: 'containerPort' };

function readYaml(path: string): Manifest[] {
  return parseAllDocuments(readFileSync(path, 'utf8'))
    .map((document) => {
      if (document.errors.length > 0) throw new Error(`${path}: ${document.errors[0]!.message}`);
      return document.toJS() as Manifest | null;
    })
    .filter((manifest): manifest is Manifest => manifest !== null);
}

function kustomizationOf(dir: string): Record<string, any> {
  const path = ['kustomization.yaml', 'kustomization.yml'].map((name) => join(dir, name)).find((candidate) => existsSync(candidate));
  if (!path) throw new Error(`${dir}: no kustomization.yaml`);
  const kustomization = readYaml(path)[0] as Record<string, any>;
  const unsupported = Object.keys(kustomization).filter((key) => !SUPPORTED.has(key));
  if (unsupported.length > 0) throw new Error(`${path}: this resolver does not implement ${unsupported.join(', ')}`);
  return kustomization;
}

function isObject(value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function mergeLists(target: any[], patch: any[], key: string): any[] {
  const merged = target.map((item) => structuredClone(item));
  for (const item of patch) {
    const index = merged.findIndex((existing) => existing[key] === item[key]);
    if (index === -1) merged.push(structuredClone(item));
    else merged[index] = strategicMerge(merged[index], item, true);
  }
  return merged;
}

export function strategicMerge(target: Record<string, any>, patch: Record<string, any>, builtin: boolean): Record<string, any> {
  const result = structuredClone(target);
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else if (isObject(value) && isObject(result[key])) result[key] = strategicMerge(result[key], value, builtin);
    else if (Array.isArray(value) && Array.isArray(result[key]) && builtin && MERGE_KEYS[key]) result[key] = mergeLists(result[key], value, MERGE_KEYS[key]);
    else result[key] = structuredClone(value);
  }
  return result;
}

const group = (apiVersion: string) => (apiVersion.includes('/') ? apiVersion.split('/')[0]! : '');

function applyPatch(manifests: Manifest[], patch: Manifest, source: string): Manifest[] {
  const matches = (m: Manifest) => m.kind === patch.kind && group(m.apiVersion) === group(patch.apiVersion) && m.metadata.name === patch.metadata.name;
  if (!manifests.some(matches)) throw new Error(`${source}: no ${patch.kind} named ${patch.metadata.name} to patch`);
  const builtin = !group(patch.apiVersion).includes('.') || group(patch.apiVersion).endsWith('.k8s.io');
  return manifests.map((m) => (matches(m) ? (strategicMerge(m, patch, builtin) as Manifest) : m));
}

function patchAll(manifests: Manifest[], dir: string, patches: { path: string }[] = []): Manifest[] {
  for (const entry of patches) {
    if (Object.keys(entry).some((key) => key !== 'path')) throw new Error(`${dir}: only patches by path are implemented`);
    const documents = readYaml(join(dir, entry.path));
    if (documents.length !== 1) throw new Error(`${dir}/${entry.path}: one patch per file`);
    manifests = applyPatch(manifests, documents[0]!, `${dir}/${entry.path}`);
  }
  return manifests;
}

function generateSecrets(dir: string, kustomization: Record<string, any>): Manifest[] {
  const generators: { name: string; literals: string[] }[] = kustomization.secretGenerator ?? [];
  if (generators.length > 0 && kustomization.generatorOptions?.disableNameSuffixHash !== true) {
    throw new Error(`${dir}: name-suffix hashes are not implemented; set generatorOptions.disableNameSuffixHash`);
  }
  return generators.map(({ name, literals }) => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name },
    type: 'Opaque',
    data: Object.fromEntries(
      literals.map((literal) => {
        const at = literal.indexOf('=');
        return [literal.slice(0, at), Buffer.from(literal.slice(at + 1)).toString('base64')];
      }),
    ),
  }));
}

function setImages(manifest: Manifest, images: { name: string; newName?: string; newTag?: string }[]): void {
  const pod = manifest.spec?.template?.spec ?? manifest.spec?.jobTemplate?.spec?.template?.spec;
  for (const container of [...(pod?.containers ?? []), ...(pod?.initContainers ?? [])]) {
    const [name, tag] = String(container.image).split(':');
    const image = images.find((candidate) => candidate.name === name);
    if (image) container.image = `${image.newName ?? name}${(image.newTag ?? tag) ? `:${image.newTag ?? tag}` : ''}`;
  }
}

function transform(manifests: Manifest[], kustomization: Record<string, any>): Manifest[] {
  return manifests.map((original) => {
    const manifest = structuredClone(original);
    if (kustomization.namespace) manifest.metadata.namespace = kustomization.namespace;
    for (const label of kustomization.labels ?? []) {
      if (label.includeSelectors || label.includeTemplates) throw new Error('labels: only metadata labels are implemented');
      manifest.metadata.labels = { ...manifest.metadata.labels, ...label.pairs };
    }
    if (kustomization.images) setImages(manifest, kustomization.images);
    return manifest;
  });
}

/** The manifests `kustomize build <dir>` would print, in the same order of resources. */
export function kustomizeBuild(dir: string): Manifest[] {
  const kustomization = kustomizationOf(dir);
  let manifests: Manifest[] = [];
  for (const resource of kustomization.resources ?? []) {
    const path = resolve(dir, resource);
    manifests.push(...(statSync(path).isDirectory() ? kustomizeBuild(path) : readYaml(path)));
  }
  for (const component of kustomization.components ?? []) {
    const componentDir = resolve(dir, component);
    const spec = kustomizationOf(componentDir);
    if (spec.kind !== 'Component') throw new Error(`${componentDir}: not a Component`);
    for (const resource of spec.resources ?? []) manifests.push(...readYaml(join(componentDir, resource)));
    manifests = patchAll(manifests, componentDir, spec.patches);
  }
  manifests.push(...generateSecrets(dir, kustomization));
  manifests = patchAll(manifests, dir, kustomization.patches);
  return transform(manifests, kustomization);
}
