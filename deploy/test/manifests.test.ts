// Every manifest under deploy/ validated against its API's schema, as `kubectl apply` would check it:
// Kubernetes' own kinds and the Prometheus Operator's ServiceMonitor with the schemas kubernetes-models
// and @kubernetes-models/prometheus-operator generate from the upstream OpenAPI (types, required
// fields, enums, formats; they accept unknown fields, which kubectl's strict field validation would
// refuse); KServe's InferenceService and ServingRuntime with the schemas of KServe's CRDs, vendored
// under schemas/ (see vendor-kserve.mjs there), checked strictly: an unknown field fails.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { ConfigMap, PersistentVolumeClaim, Service } from 'kubernetes-models/v1';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

const DEPLOY = fileURLToPath(new URL('../', import.meta.url));

type Manifest = { apiVersion: string; kind: string; metadata: { name: string }; [field: string]: unknown };

function manifests(): Array<{ file: string; manifest: Manifest }> {
  return readdirSync(DEPLOY, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.yaml'))
    .sort()
    .flatMap((file) =>
      parseAllDocuments(readFileSync(join(DEPLOY, file), 'utf8')).map((document) => ({ file, manifest: document.toJS() as Manifest })),
    );
}

/** Kubernetes-models classes: `new Kind(object).validate()` throws naming the first bad fields. */
const MODELS: Record<string, new (data: any) => { validate(): void }> = {
  'apps/v1 Deployment': Deployment,
  'autoscaling/v2 HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'v1 Service': Service,
  'v1 PersistentVolumeClaim': PersistentVolumeClaim,
  'v1 ConfigMap': ConfigMap,
  'monitoring.coreos.com/v1 ServiceMonitor': ServiceMonitor,
};

type Vendored = { source: string; group: string; kind: string; version: string; schema: Record<string, unknown> };

/**
 * A CRD's structural schema made strict as the API server's field validation is: objects that list
 * their properties take no others, except where the schema preserves unknown fields. `metadata`
 * (bare `type: object` in a CRD) is left to the API server.
 */
function strict(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(strict);
  if (!node || typeof node !== 'object') return node;
  const schema = Object.fromEntries(Object.entries(node).map(([key, value]) => [key, key === 'properties' ? Object.fromEntries(Object.entries(value as object).map(([name, sub]) => [name, strict(sub)])) : strict(value)]));
  if (schema.properties && !schema['x-kubernetes-preserve-unknown-fields'] && schema.additionalProperties === undefined) schema.additionalProperties = false;
  return schema;
}

const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false });
const kserve = new Map<string, { vendored: Vendored; validate: ValidateFunction }>(
  ['InferenceService', 'ServingRuntime'].map((kind) => {
    const vendored = JSON.parse(readFileSync(new URL(`./schemas/${kind}.json`, import.meta.url), 'utf8')) as Vendored;
    return [`${vendored.group}/${vendored.version} ${vendored.kind}`, { vendored, validate: ajv.compile(strict(vendored.schema) as object) }];
  }),
);

/** Why a manifest does not validate, or null. */
function problems(manifest: Manifest): string | null {
  const key = `${manifest.apiVersion} ${manifest.kind}`;
  const Model = MODELS[key];
  if (Model) {
    try {
      new Model(manifest).validate();
      return null;
    } catch (error) {
      return (error as Error).message;
    }
  }
  const crd = kserve.get(key);
  if (!crd) return `no schema for ${key}`;
  return crd.validate(manifest) ? null : ajv.errorsText(crd.validate.errors, { dataVar: key });
}

describe('deploy/ manifests against their API schemas', () => {
  const all = manifests();

  it.each(all.map(({ file, manifest }) => [`${file}: ${manifest.apiVersion} ${manifest.kind} ${manifest.metadata.name}`, manifest] as const))('%s', (_, manifest) => {
    expect(problems(manifest)).toBeNull();
  });

  it('covers every kind the manifests use', () => {
    expect(all.map(({ manifest }) => `${manifest.apiVersion} ${manifest.kind}`).sort()).toEqual(
      [...Object.keys(MODELS), ...kserve.keys()].sort(),
    );
  });

  it('refuses what the API server would refuse', () => {
    const copy = (kind: string) => structuredClone(all.find(({ manifest }) => manifest.kind === kind)!.manifest) as any;

    const deployment = copy('Deployment');
    deployment.spec.template.spec.containers[0].ports[0].containerPort = '8000';
    expect(problems(deployment)).toMatch(/containerPort must be integer/);
    const noName = copy('Deployment');
    delete noName.spec.template.spec.containers[0].name;
    expect(problems(noName)).toMatch(/must have required property '?name'?/);
    const hpa = copy('HorizontalPodAutoscaler');
    hpa.spec.metrics[0].pods.target.averageValue = { value: 20000 };
    expect(problems(hpa)).toMatch(/averageValue must be (string|number)/);

    const runtime = copy('ServingRuntime');
    runtime.spec.containers[0].args = '--http-port=8080';
    expect(problems(runtime)).toMatch(/args must be array/);
    const typo = copy('ServingRuntime');
    typo.spec.supportedModelFormat = typo.spec.supportedModelFormats;
    expect(problems(typo)).toMatch(/must NOT have additional properties/);
    const isvc = copy('InferenceService');
    isvc.spec.predictor.model.storageURI = isvc.spec.predictor.model.storageUri;
    expect(problems(isvc)).toMatch(/must NOT have additional properties/);
  });

  it('vendors the KServe schemas with their source', () => {
    for (const { vendored } of kserve.values()) expect(vendored.source).toMatch(/^https:\/\/github\.com\/kserve\/kserve\/blob\/[0-9a-f]{40}\//);
  });
});
