import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { useServerFixture } from '../../core/test/helpers/server-fixture.js';
import { testConfig } from '../../core/test/helpers/repository.js';
import { DEFAULTS, parseCommandLine, type ServeOptions } from '../src/cli/arguments.js';
import { SHUTDOWN_GRACE_MS } from '../src/cli/shutdown.js';
import { routeOf } from '../src/http/routes.js';
import { METRICS_PATH } from '../src/metrics/metrics-frontend.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const DEPLOY = join(ROOT, 'deploy');
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'packages/frontend/package.json'), 'utf8')) as { bin: Record<string, string> };

// Loosely typed: the tests below check the fields they read.
type Manifest = Record<string, any>;

/** Every document of every YAML file under deploy/, by file. */
function manifests(): Map<string, Manifest[]> {
  const files = readdirSync(DEPLOY, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.yaml'));
  return new Map(
    files.map((file) => {
      const documents = parseAllDocuments(readFileSync(join(DEPLOY, file), 'utf8'));
      for (const document of [documents].flat()) expect(document.errors, file).toEqual([]);
      return [file, [documents].flat().map((document) => document.toJS() as Manifest)];
    }),
  );
}

function only(kind: string): Manifest {
  const found = [...manifests().values()].flat().filter((manifest) => manifest.kind === kind);
  expect(found, kind).toHaveLength(1);
  return found[0]!;
}

/** The options `tritium <args>` runs with. */
function served(args: readonly string[]): ServeOptions {
  const command = parseCommandLine(args);
  if (command.kind !== 'serve') throw new Error(`${args.join(' ')} does not serve`);
  return command.options;
}

/** The final stage's instructions of the Dockerfile, continuation lines joined. */
function dockerfile(): Map<string, string[]> {
  const stage = readFileSync(join(ROOT, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ').split(/^FROM /m).at(-1)!;
  const instructions = new Map<string, string[]>();
  for (const line of stage.split('\n').filter((line) => /^[A-Z]+ /.test(line))) {
    const [instruction, ...rest] = line.split(' ');
    instructions.set(instruction!, [...(instructions.get(instruction!) ?? []), rest.join(' ')]);
  }
  return instructions;
}

const fx = useServerFixture();

describe('deploy/', () => {
  it('holds Kubernetes manifests that parse, each with apiVersion, kind and a name', () => {
    const all = manifests();
    expect([...all.keys()].sort()).toEqual([
      'kserve/inference-service.yaml',
      'kserve/serving-runtime.yaml',
      'kubernetes/deployment.yaml',
      'kubernetes/hpa.yaml',
      'kubernetes/model-repository.yaml',
      'kubernetes/prometheus-adapter-rules.yaml',
      'kubernetes/service-monitor.yaml',
      'kubernetes/service.yaml',
    ]);
    for (const manifest of [...all.values()].flat()) {
      expect(manifest.apiVersion).toEqual(expect.any(String));
      expect(manifest.kind).toEqual(expect.any(String));
      expect(manifest.metadata.name).toEqual(expect.any(String));
    }
  });

  it("runs the Deployment's command line, with its ports, probes and volume agreeing with it", () => {
    const pod = only('Deployment').spec.template.spec;
    const [container] = pod.containers;
    const options = served(container.args);
    const ports = Object.fromEntries(container.ports.map((port: Manifest) => [port.name, port.containerPort]));
    expect(ports).toEqual({ http: options.http!.port, grpc: options.grpc!.port, metrics: options.metrics!.port });
    expect(ports).toEqual({ http: DEFAULTS.httpPort, grpc: DEFAULTS.grpcPort, metrics: DEFAULTS.metricsPort });
    for (const probe of [container.startupProbe, container.livenessProbe, container.readinessProbe]) expect(probe.httpGet.port).toBe('http');
    // The paths the HTTP service routes to its health probes (Kubernetes probes with GET).
    expect(routeOf('GET', container.startupProbe.httpGet.path)).toEqual({ kind: 'health', probe: 'live' });
    expect(routeOf('GET', container.livenessProbe.httpGet.path)).toEqual({ kind: 'health', probe: 'live' });
    expect(routeOf('GET', container.readinessProbe.httpGet.path)).toEqual({ kind: 'health', probe: 'ready' });
    const models = container.volumeMounts.find((mount: Manifest) => mount.name === 'models');
    expect(options.server.modelRepository).toEqual([models.mountPath]);
    expect(pod.volumes.find((volume: Manifest) => volume.name === 'models').persistentVolumeClaim.claimName).toBe(only('PersistentVolumeClaim').metadata.name);
    // Kubernetes must not kill the container before a graceful shutdown could end.
    expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(options.server.exitTimeoutMs + SHUTDOWN_GRACE_MS);
  });

  it("has the Service select the Deployment's pods and reach its named ports", () => {
    const deployment = only('Deployment');
    const service = only('Service');
    expect(deployment.spec.template.metadata.labels).toMatchObject(service.spec.selector);
    expect(deployment.spec.selector.matchLabels).toEqual(service.spec.selector);
    const named = Object.fromEntries(deployment.spec.template.spec.containers[0].ports.map((port: Manifest) => [port.name, port.containerPort]));
    for (const port of service.spec.ports) expect(named[port.targetPort], port.name).toBe(port.port);
    const monitor = only('ServiceMonitor');
    expect(monitor.spec.selector.matchLabels).toEqual(service.metadata.labels);
    expect(monitor.spec.endpoints).toEqual([expect.objectContaining({ port: 'metrics', path: METRICS_PATH })]);
  });

  it('scales on a custom metric that the adapter computes from metrics the server really exports', async () => {
    const hpa = only('HorizontalPodAutoscaler');
    expect(hpa.spec.scaleTargetRef).toMatchObject({ kind: 'Deployment', name: only('Deployment').metadata.name });
    const [metric] = hpa.spec.metrics;
    const adapter = parseAllDocuments(only('ConfigMap').data['config.yaml']);
    const [rule] = ([adapter].flat()[0]!.toJS() as Manifest).rules;
    expect(metric.pods.metric.name).toBe(rule.name.as);
    const queried = new Set(`${rule.seriesQuery} ${rule.metricsQuery}`.match(/\bnv_[a-z_]+/g));
    expect([...queried].sort()).toEqual(['nv_inference_queue_duration_us', 'nv_inference_request_success']);

    const server = await fx.start({ m: { config: testConfig({}) } });
    await server.infer('m', { inputs: { INPUT0: { datatype: 'FP32', shape: [4], data: new Float32Array(4) } } });
    const text = await server.metrics();
    for (const name of queried) expect(text).toMatch(new RegExp(`^${name}\\{model="m",version="1"\\} \\d`, 'm'));
  });

  it("declares a KServe ServingRuntime whose command line tritium runs, as KServe's Triton runtime does", () => {
    const runtime = only('ServingRuntime');
    expect(runtime.apiVersion).toBe('serving.kserve.io/v1alpha1');
    expect(runtime.spec.protocolVersions).toEqual(['v2', 'grpc-v2']);
    expect(runtime.spec.supportedModelFormats.map((format: Manifest) => format.name)).toEqual(['triton', 'onnx']);
    const [container] = runtime.spec.containers;
    expect(container.command).toEqual(Object.keys(PACKAGE.bin));
    const options = served(container.args);
    expect(options.server.modelRepository).toEqual(['/mnt/models']);
    expect([options.http!.port, options.grpc!.port]).toEqual([8080, 9000]);
    expect(runtime.spec.annotations).toEqual({ 'prometheus.kserve.io/port': String(options.metrics!.port), 'prometheus.kserve.io/path': METRICS_PATH });
    const service = only('InferenceService');
    expect(service.spec.predictor.model.runtime).toBe(runtime.metadata.name);
    expect(runtime.spec.supportedModelFormats.map((format: Manifest) => format.name)).toContain(service.spec.predictor.model.modelFormat.name);
  });
});

describe('Dockerfile', () => {
  it("exposes the command's default ports and runs it by its package's bin name", () => {
    const instructions = dockerfile();
    expect(instructions.get('EXPOSE')).toEqual([[DEFAULTS.httpPort, DEFAULTS.grpcPort, DEFAULTS.metricsPort].join(' ')]);
    const [entrypoint] = instructions.get('ENTRYPOINT')!.map((value) => JSON.parse(value) as string[]);
    expect(entrypoint).toEqual(Object.keys(PACKAGE.bin));
    const options = served(JSON.parse(instructions.get('CMD')![0]!));
    expect(options.server.modelRepository).toEqual(['/models']);
  });

  it('runs as the non-root user the manifests name', () => {
    const [user] = dockerfile().get('USER')!;
    expect(Number(user)).toBeGreaterThan(0);
    expect(only('Deployment').spec.template.spec.securityContext.runAsUser).toBe(Number(user));
    expect(only('ServingRuntime').spec.containers[0].securityContext.runAsUser).toBe(Number(user));
  });

  it('keeps built and installed files out of the build context', () => {
    const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n');
    expect(ignored).toEqual(expect.arrayContaining(['**/node_modules', '**/dist', 'packages/*/build']));
  });
});
