#!/usr/bin/env node
// Builds the image from the Dockerfile with podman, runs it as deploy/kubernetes/deployment.yaml and
// deploy/kserve/serving-runtime.yaml would, and checks from outside the container what those
// manifests promise: the probes' routes and ports, the non-root user, the mounted model repository,
// the gRPC port, the metrics the HPA's adapter rule reads, and a SIGTERM drain that ends within
// terminationGracePeriodSeconds. Values come from the manifests themselves, not restated here.
//
//   node deploy/container-check.mjs [--base-image=REF] [--rebuild-base] [--keep-image] [--image=REF]
//
// --base-image   the Dockerfile's NODE_IMAGE (Debian bookworm with Node.js 20). Without it the script
//                uses localhost/tritium-base:node20, making it first when missing (--rebuild-base: always)
//                with mmdebstrap from the Debian mirror and this machine's Node.js 20, so that no
//                container registry is needed; where that cannot be done it pulls the Dockerfile's
//                default, node:20-bookworm-slim. The base keeps the CAs of /usr/local/share/ca-certificates
//                (an egress proxy's, say) and sets NODE_EXTRA_CA_CERTS, so npm inside the build trusts them.
// --image        check an image already built instead of building one.
// --keep-image   keep the image built (localhost/tritium:check); by default it is removed at the end.
//
// The build itself needs the Debian mirror (apt in both stages) and the npm registry (pnpm, the
// workspace's dependencies): it runs with --network=host.
//
// Exit status: 0 when every check passed, 1 when one failed, 3 when the checks cannot run here
// (no podman, no base image, no network for the build): the last line then says why.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http2 from 'node:http2';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

export const CANNOT_RUN = 3;
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DEFAULT_BASE = 'localhost/tritium-base:node20';
const DOCKERFILE_DEFAULT_BASE = 'node:20-bookworm-slim';
const IMAGE = 'localhost/tritium:check';
const SLOW_SECONDS = 5;

const flags = new Map(
  process.argv.slice(2).map((arg) => {
    const [key, ...value] = arg.replace(/^--/, '').split('=');
    return [key, value.length ? value.join('=') : true];
  }),
);
for (const key of flags.keys()) {
  if (!['base-image', 'rebuild-base', 'keep-image', 'image'].includes(key)) {
    console.error(`container-check: unknown option --${key}`);
    process.exit(2);
  }
}

const log = (line) => console.log(`container-check: ${line}`);
function cannotRun(reason) {
  log(`cannot run here: ${reason}`);
  process.exit(CANNOT_RUN);
}

/** A command run to its end: status and output; never throws. */
function run(command, args, options = {}) {
  const result = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 256 << 20, timeout: options.timeout ?? 120_000, input: options.input });
  return {
    status: result.error ? -1 : result.status,
    stdout: result.stdout ?? '',
    stderr: result.error ? String(result.error.message) : (result.stderr ?? ''),
    error: result.error,
  };
}
const firstLine = (text) => text.split('\n').map((line) => line.trim()).find(Boolean) ?? '(no output)';
const lastLines = (text, n = 30) => text.trimEnd().split('\n').slice(-n).join('\n');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const mib = (bytes) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

// ---------------------------------------------------------------------------------------------
// The manifests.

const manifests = readdirSync(join(ROOT, 'deploy'), { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.yaml'))
  .flatMap((file) => parseAllDocuments(readFileSync(join(ROOT, 'deploy', file), 'utf8')).map((document) => document.toJS()));
function only(kind) {
  const found = manifests.filter((manifest) => manifest?.kind === kind);
  if (found.length !== 1) throw new Error(`expected one ${kind} under deploy/, found ${found.length}`);
  return found[0];
}
const deployment = only('Deployment');
const service = only('Service');
const hpa = only('HorizontalPodAutoscaler');
const serviceMonitor = only('ServiceMonitor');
const servingRuntime = only('ServingRuntime');
const adapterConfig = parseAllDocuments(only('ConfigMap').data['config.yaml'])[0].toJS();
const pod = deployment.spec.template.spec;
const container = pod.containers[0];
const containerPort = (name) => {
  const port = container.ports.find((p) => p.name === name || p.containerPort === name);
  if (!port) throw new Error(`the Deployment's container has no port ${name}`);
  return port.containerPort;
};
/** "1Gi" → "1073741824" (podman takes bytes). */
const bytes = (quantity) => {
  const match = /^(\d+)(Ki|Mi|Gi|Ti)?$/.exec(String(quantity));
  if (!match) throw new Error(`unsupported quantity ${quantity}`);
  return String(Number(match[1]) * 1024 ** (['', 'Ki', 'Mi', 'Gi', 'Ti'].indexOf(match[2] ?? '')));
};

// ---------------------------------------------------------------------------------------------
// podman: present, working, and a runtime and limits it can start a container with.

const where = (command) => run('sh', ['-c', `command -v ${command}`]).stdout.trim() || null;
if (!where('podman')) cannotRun('podman is not installed (Debian: apt-get install podman crun uidmap slirp4netns fuse-overlayfs mmdebstrap)');
const info = run('podman', ['info', '--format', '{{.Host.CgroupsVersion}} {{.Store.GraphDriverName}}'], { timeout: 60_000 });
if (info.status !== 0) cannotRun(`podman info failed: ${firstLine(info.stderr)}`);
log(`podman ${run('podman', ['--version']).stdout.trim().replace(/^podman version /, '')}, cgroups ${info.stdout.trim()}`);

/** The hard limit this process has for a resource of /proc/self/limits. */
function hardLimit(name) {
  const line = readFileSync('/proc/self/limits', 'utf8').split('\n').find((l) => l.startsWith(name));
  const value = line?.trim().split(/\s{2,}/)[2];
  return value && value !== 'unlimited' ? Number(value) : null;
}

let podmanGlobal = [];
let limits = [];
const containers = new Set();
const podman = (args, options) => run('podman', [...podmanGlobal, ...args], options);

function exists(image) {
  return podman(['image', 'exists', image]).status === 0;
}

// ---------------------------------------------------------------------------------------------
// The base image.

function makeBase(tag) {
  const why = [];
  if (process.platform !== 'linux') why.push('not Linux');
  if (!where('mmdebstrap')) why.push('mmdebstrap is not installed');
  if (process.versions.node.split('.')[0] !== '20') why.push(`this Node.js is ${process.version}, the image needs 20`);
  const node = realpathSync(process.execPath);
  const prefix = dirname(dirname(node));
  const modules = join(prefix, 'lib', 'node_modules');
  if (!existsSync(join(modules, 'npm'))) why.push(`no npm under ${modules}`);
  if (why.length) return why.join('; ');
  const mirror = process.env.TRITIUM_DEBIAN_MIRROR ?? 'http://deb.debian.org/debian';
  const cas = existsSync('/usr/local/share/ca-certificates')
    ? readdirSync('/usr/local/share/ca-certificates').filter((f) => f.endsWith('.crt')).map((f) => join('/usr/local/share/ca-certificates', f))
    : [];
  const headers = join(prefix, 'include', 'node');
  const work = mkdtempSync(join(tmpdir(), 'tritium-base-'));
  const tar = join(work, 'base.tar');
  const q = (s) => `'${s.replace(/'/g, `'\\''`)}'`;
  const hooks = [
    `copy-in ${q(node)} /usr/local/bin`,
    'mkdir -p "$1/usr/local/lib" "$1/usr/local/include"',
    `copy-in ${q(modules)} /usr/local/lib`,
    ...(existsSync(headers) ? [`copy-in ${q(headers)} /usr/local/include`] : []),
    'ln -s ../lib/node_modules/npm/bin/npm-cli.js "$1/usr/local/bin/npm"',
    'ln -s ../lib/node_modules/npm/bin/npx-cli.js "$1/usr/local/bin/npx"',
    ...(existsSync(join(modules, 'corepack')) ? ['ln -s ../lib/node_modules/corepack/dist/corepack.js "$1/usr/local/bin/corepack"'] : []),
    ...(cas.length ? [`copy-in ${cas.map(q).join(' ')} /usr/local/share/ca-certificates`, 'chroot "$1" update-ca-certificates'] : []),
    'rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin',
  ];
  log(`making ${tag}: mmdebstrap bookworm from ${mirror}, with ${node} (${process.version})${cas.length ? ` and the CAs ${cas.join(', ')}` : ''}`);
  const started = Date.now();
  const made = run(
    'mmdebstrap',
    [
      '--variant=apt',
      '--include=ca-certificates,libstdc++6',
      ...['/usr/share/man/*', '/usr/share/doc/*', '/usr/share/locale/*'].map((p) => `--dpkgopt=path-exclude=${p}`),
      '--dpkgopt=path-include=/usr/share/doc/*/copyright',
      ...hooks.map((hook) => `--customize-hook=${hook}`),
      'bookworm',
      tar,
      mirror,
    ],
    { timeout: 20 * 60_000 },
  );
  if (made.status !== 0) {
    rmSync(work, { recursive: true, force: true });
    return `mmdebstrap failed: ${lastLines(made.stderr, 5)}`;
  }
  const imported = podman(
    [
      'import',
      '--change', 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      ...(cas.length ? ['--change', 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt'] : []),
      '--change', 'CMD ["node"]',
      tar,
      tag,
    ],
    { timeout: 10 * 60_000 },
  );
  rmSync(work, { recursive: true, force: true });
  if (imported.status !== 0) return `podman import failed: ${firstLine(imported.stderr)}`;
  log(`made ${tag} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return null;
}

let base = typeof flags.get('base-image') === 'string' ? flags.get('base-image') : DEFAULT_BASE;
if (!flags.has('image')) {
  if (flags.has('base-image')) {
    if (!exists(base) && podman(['pull', base], { timeout: 10 * 60_000 }).status !== 0) cannotRun(`the base image ${base} is neither here nor pullable`);
  } else if (flags.has('rebuild-base') || !exists(base)) {
    if (exists(base)) podman(['rmi', base]);
    const failed = makeBase(base);
    if (failed) {
      log(`cannot make ${base} (${failed}); pulling ${DOCKERFILE_DEFAULT_BASE}`);
      const pulled = podman(['pull', DOCKERFILE_DEFAULT_BASE], { timeout: 10 * 60_000 });
      if (pulled.status !== 0) cannotRun(`no base image: cannot make ${base} (${failed}), and pulling ${DOCKERFILE_DEFAULT_BASE} failed: ${firstLine(pulled.stderr)}`);
      base = DOCKERFILE_DEFAULT_BASE;
    }
  }
}
const probeImage = flags.has('image') ? flags.get('image') : base;

// Some hosts refuse podman's defaults: crun cannot run on cgroups v1 with controllers left on v2
// ("hybrid"), and raising RLIMIT_NOFILE/NPROC needs CAP_SYS_RESOURCE. Take the first that starts.
{
  const nofile = hardLimit('Max open files');
  const nproc = hardLimit('Max processes');
  const limitOptions = [[], [...(nofile ? ['--ulimit', `nofile=${nofile}:${nofile}`] : []), ...(nproc ? ['--ulimit', `nproc=${Math.min(nproc, 32768)}:${Math.min(nproc, 32768)}`] : [])]];
  const runtimes = [[], ...(where('runc') ? [['--runtime', 'runc']] : [])];
  const failures = [];
  search: for (const runtime of runtimes) {
    for (const limit of limitOptions) {
      const tried = run('podman', [...runtime, 'run', '--rm', '--network=none', ...limit, probeImage, 'true'], { timeout: 120_000 });
      if (tried.status === 0) {
        podmanGlobal = runtime;
        limits = limit;
        break search;
      }
      failures.push(`${[...runtime, ...limit].join(' ') || 'defaults'}: ${firstLine(tried.stderr)}`);
    }
  }
  if (failures.length === runtimes.length * limitOptions.length) cannotRun(`podman cannot start a container: ${failures.join(' | ')}`);
  if (failures.length) log(`podman starts containers with ${[...podmanGlobal, ...limits].join(' ')} (${failures.join(' | ')})`);
}

// ---------------------------------------------------------------------------------------------
// The build.

let image = flags.get('image');
const figures = {};
if (!image) {
  image = IMAGE;
  log(`building ${image} from the Dockerfile with NODE_IMAGE=${base}`);
  const started = Date.now();
  const built = await new Promise((resolve) => {
    const child = spawn('podman', [...podmanGlobal, 'build', '--layers=false', '--network=host', ...limits, '--build-arg', `NODE_IMAGE=${base}`, '-t', image, ROOT], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const timer = setTimeout(() => child.kill('SIGTERM'), 40 * 60_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
  figures.buildSeconds = Math.round((Date.now() - started) / 1000);
  if (built.code !== 0) {
    const tail = lastLines(built.output.replace(/\r/g, '\n'), 40);
    console.log(tail);
    if (/ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ECONNRESET|SELF_SIGNED|UNABLE_TO_GET_ISSUER|Temporary failure resolving|Could not resolve|Failed to fetch/i.test(tail)) {
      cannotRun('the build could not reach the npm registry or the Debian mirror (see the output above)');
    }
    log(`FAIL: podman build exited with ${built.code} after ${figures.buildSeconds} s`);
    process.exit(1);
  }
  log(`built ${image} in ${figures.buildSeconds} s`);
}

// ---------------------------------------------------------------------------------------------
// Checks.

const failures = [];
let passed = 0;
async function check(name, body) {
  try {
    const detail = await body();
    passed += 1;
    log(`ok   ${name}${detail ? ` (${detail})` : ''}`);
  } catch (error) {
    failures.push(name);
    log(`FAIL ${name}: ${error instanceof Error ? error.message : String(error)}`);
  }
}
function expect(condition, message) {
  if (!condition) throw new Error(message);
}

const inspected = JSON.parse(podman(['image', 'inspect', image]).stdout)[0];
figures.imageBytes = inspected.Size;
log(`image ${image}: ${mib(inspected.Size)} (base ${base}${exists(base) ? `: ${mib(JSON.parse(podman(['image', 'inspect', base]).stdout)[0].Size)}` : ''})`);

await check("the image's user is the Deployment's numeric non-root runAsUser", () => {
  const user = inspected.Config.User;
  expect(/^\d+$/.test(user) && user !== '0', `image user is ${JSON.stringify(user)}: runAsNonRoot needs a numeric non-zero user`);
  expect(Number(user) === pod.securityContext.runAsUser, `image user ${user}, Deployment runAsUser ${pod.securityContext.runAsUser}`);
  return `USER ${user}`;
});
await check("the image exposes the Deployment's container ports", () => {
  const exposed = Object.keys(inspected.Config.ExposedPorts ?? {}).map((p) => Number(p.split('/')[0]));
  for (const port of container.ports) expect(exposed.includes(port.containerPort), `${port.name} ${port.containerPort} is not exposed (${exposed})`);
  return exposed.join(', ');
});

// A model repository: tiny.onnx, and a Python model whose execute() sleeps, for the drain.
const repository = mkdtempSync(join(tmpdir(), 'tritium-models-'));
const files = {
  'tiny/config.pbtxt': 'backend: "onnxruntime"\n',
  'tiny/1/model.onnx': { copy: join(ROOT, 'packages/backend-onnx/models/tiny.onnx') },
  'slow/config.pbtxt': `backend: "python"
input { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] }
output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] }
instance_group { count: 1 kind: KIND_CPU }
`,
  'slow/1/model.py': `import time
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        open("/tmp/slow.executing", "w").close()
        time.sleep(${SLOW_SECONDS})
        return [
            pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("OUTPUT0", pb_utils.get_input_tensor_by_name(r, "INPUT0").as_numpy())])
            for r in requests
        ]
`,
};
for (const [path, content] of Object.entries(files)) {
  const target = join(repository, path);
  mkdirSync(dirname(target), { recursive: true });
  if (typeof content === 'string') writeFileSync(target, content);
  else copyFileSync(content.copy, target);
}
// Readable by the container's user, whatever this process's umask.
for (const entry of ['', ...readdirSync(repository, { recursive: true, encoding: 'utf8' })]) {
  const path = join(repository, entry);
  chmodSync(path, statSync(path).isDirectory() ? 0o755 : 0o644);
}

/** Starts the image as a pod spec's container would; returns its name and the host ports of its container ports. */
function start(name, { command, args, user, groups, mounts, ports, shm, resources, capDrop, noNewPrivileges }) {
  const published = ports.flatMap((port) => ['-p', `127.0.0.1::${port}`]);
  const options = [
    '--name', name,
    ...limits,
    ...(user ? ['--user', user] : []),
    ...groups.flatMap((group) => ['--group-add', String(group)]),
    ...mounts.flatMap((mount) => ['-v', `${mount.source}:${mount.target}${mount.readOnly ? ':ro' : ''}`]),
    ...(shm ? ['--shm-size', bytes(shm)] : []),
    ...(resources?.memory ? ['--memory', bytes(resources.memory)] : []),
    ...(resources?.cpu ? ['--cpus', String(resources.cpu)] : []),
    ...(capDrop?.includes('ALL') ? ['--cap-drop', 'ALL'] : []),
    ...(noNewPrivileges ? ['--security-opt', 'no-new-privileges'] : []),
    ...(command ? ['--entrypoint', JSON.stringify(command)] : []),
  ];
  let started = podman(['run', '-d', ...options, ...published, image, ...args]);
  if (started.status !== 0 && /network|cni|netavark|iptables/i.test(started.stderr)) {
    log(`the default network failed (${firstLine(started.stderr)}); using slirp4netns`);
    podman(['rm', '-f', name]);
    started = podman(['run', '-d', '--network=slirp4netns', ...options, ...published, image, ...args]);
  }
  if (started.status !== 0) throw new Error(`podman run failed: ${lastLines(started.stderr, 5)}`);
  containers.add(name);
  const hostPorts = new Map();
  for (const port of ports) {
    const mapped = podman(['port', name, `${port}/tcp`]).stdout.trim().split('\n')[0];
    hostPorts.set(port, Number(mapped.split(':').at(-1)));
  }
  return hostPorts;
}
const logsOf = (name) => {
  const logs = podman(['logs', name]);
  return lastLines(`${logs.stdout}${logs.stderr}`, 25);
};
const state = (name) => JSON.parse(podman(['inspect', name]).stdout || '[{}]')[0]?.State ?? {};

async function get(url, options) {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(10_000), ...options });
    return { status: response.status, text: await response.text() };
  } catch (error) {
    return { status: 0, text: String(error.cause?.code ?? error.message) };
  }
}
/** A unary gRPC call with an empty request message: grpc-status and the response message. */
function grpcCall(port, method) {
  return new Promise((resolve, reject) => {
    const client = http2.connect(`http://127.0.0.1:${port}`);
    client.on('error', reject);
    const request = client.request({ ':method': 'POST', ':path': `/inference.GRPCInferenceService/${method}`, 'content-type': 'application/grpc', te: 'trailers' });
    const chunks = [];
    let status;
    request.on('response', (headers) => (status ??= headers['grpc-status']));
    request.on('trailers', (trailers) => (status = trailers['grpc-status']));
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('error', reject);
    request.on('end', () => {
      client.close();
      resolve({ status: Number(status), message: Buffer.concat(chunks).subarray(5) });
    });
    request.setTimeout(10_000, () => request.close());
    request.end(Buffer.alloc(5));
  });
}
/** ServerLiveResponse / ServerReadyResponse: field 1, a bool, set → 08 01. */
const grpcTrue = async (port, method) => {
  const answer = await grpcCall(port, method);
  return answer.status === 0 && answer.message.equals(Buffer.from([8, 1]));
};
/** The HTTP port a probe names (a container port's name or number), mapped to this host. */
const probePort = (probe, hostPorts) => hostPorts.get(containerPort(probe.httpGet.port));
const tinyRequest = JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [2, 1], data: [1, 2] }] });
const slowRequest = JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [4], data: [1, 2, 3, 4] }] });
const post = (url, body) => get(url, { method: 'POST', body, headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(60_000) });

/** Metric names an adapter rule's queries read. */
const adapterRule = adapterConfig.rules.find((rule) => rule.name.as === hpa.spec.metrics[0].pods.metric.name);
const adapterSeries = [...new Set([...`${adapterRule?.seriesQuery ?? ''} ${adapterRule?.metricsQuery ?? ''}`.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\{/g)].map((m) => m[1]))];
/** The value of a sample `name{...model="m"...}` in a Prometheus exposition. */
const sample = (text, name, model) => {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(`model="${model}"`));
  return line ? Number(line.split(' ').at(-1)) : null;
};

const suffix = `${process.pid}`;
try {
  // ------------------------------------------------------------------ The Deployment.
  const name = `tritium-check-${suffix}`;
  const modelsMount = container.volumeMounts.find((mount) => pod.volumes.find((v) => v.name === mount.name)?.persistentVolumeClaim);
  const dshm = container.volumeMounts.find((mount) => mount.mountPath === '/dev/shm');
  const ports = container.ports.map((p) => p.containerPort);
  const hostPorts = start(name, {
    args: container.args,
    user: `${pod.securityContext.runAsUser}:${pod.securityContext.runAsGroup}`,
    groups: [pod.securityContext.fsGroup],
    mounts: [{ source: repository, target: modelsMount.mountPath, readOnly: modelsMount.readOnly }],
    ports,
    shm: dshm && pod.volumes.find((v) => v.name === dshm.name)?.emptyDir?.sizeLimit,
    resources: container.resources?.limits,
    capDrop: container.securityContext?.capabilities?.drop,
    noNewPrivileges: container.securityContext?.allowPrivilegeEscalation === false,
  });
  log(`running ${name}: tritium ${container.args.join(' ')}; ports ${[...hostPorts].map(([c, h]) => `${c}→127.0.0.1:${h}`).join(', ')}`);

  const startedAt = Date.now();
  await check(`the startupProbe GET ${container.startupProbe.httpGet.path} on port ${container.startupProbe.httpGet.port} answers 200 within periodSeconds × failureThreshold`, async () => {
    const probe = container.startupProbe;
    const deadline = startedAt + ((probe.initialDelaySeconds ?? 0) + probe.periodSeconds * probe.failureThreshold) * 1000;
    const url = `http://127.0.0.1:${probePort(probe, hostPorts)}${probe.httpGet.path}`;
    for (;;) {
      const answer = await get(url);
      if (answer.status === 200) break;
      if (!state(name).Running) throw new Error(`the container exited (${state(name).ExitCode}):\n${logsOf(name)}`);
      if (Date.now() > deadline) throw new Error(`${url} still answers ${answer.status} ${answer.text}`);
      await sleep(250);
    }
    figures.startupSeconds = (Date.now() - startedAt) / 1000;
    return `after ${figures.startupSeconds.toFixed(1)} s`;
  });
  for (const kind of ['livenessProbe', 'readinessProbe']) {
    const probe = container[kind];
    await check(`the ${kind} GET ${probe.httpGet.path} on port ${probe.httpGet.port} answers 200`, async () => {
      const answer = await get(`http://127.0.0.1:${probePort(probe, hostPorts)}${probe.httpGet.path}`);
      expect(answer.status === 200, `${answer.status} ${answer.text}`);
    });
  }
  await check("the server runs as the pod's runAsUser and runAsGroup, with fsGroup among its groups", () => {
    const ids = podman(['exec', name, 'sh', '-c', 'id -u; id -g; id -G']).stdout.trim().split('\n');
    expect(Number(ids[0]) === pod.securityContext.runAsUser, `uid ${ids[0]}`);
    expect(Number(ids[1]) === pod.securityContext.runAsGroup, `gid ${ids[1]}`);
    expect(ids[2].split(' ').map(Number).includes(pod.securityContext.fsGroup), `groups ${ids[2]}`);
    const pid1 = podman(['exec', name, 'sh', '-c', "tr '\\0' ' ' < /proc/1/cmdline; echo; grep -E '^(Uid|CapEff)' /proc/1/status"]).stdout;
    expect(/node .*tritium/.test(pid1), `PID 1 is not the tritium command: ${pid1}`);
    expect(/CapEff:\s+0+\s/.test(pid1), `PID 1 keeps capabilities: ${pid1}`);
    return `uid ${ids[0]}, gid ${ids[1]}, groups ${ids[2]}; PID 1 is tritium with no capabilities`;
  });
  await check(`the model repository is mounted read-only at ${modelsMount.mountPath} and its models are READY`, async () => {
    const write = podman(['exec', name, 'touch', `${modelsMount.mountPath}/x`]);
    expect(write.status !== 0, 'the repository is writable');
    const index = await post(`http://127.0.0.1:${hostPorts.get(containerPort('http'))}/v2/repository/index`, '{}');
    const models = JSON.parse(index.text);
    for (const model of ['tiny', 'slow']) expect(models.some((m) => m.name === model && m.state === 'READY'), `index: ${index.text}`);
    return index.text;
  });
  await check('an inference through the http port answers tiny.onnx\'s x + 1', async () => {
    const answer = await post(`http://127.0.0.1:${hostPorts.get(containerPort('http'))}/v2/models/tiny/infer`, tinyRequest);
    expect(answer.status === 200, `${answer.status} ${answer.text}`);
    expect(JSON.stringify(JSON.parse(answer.text).outputs[0].data) === '[2,3]', answer.text);
  });
  await check('the grpc port answers ServerLive and ServerReady true', async () => {
    const port = hostPorts.get(containerPort('grpc'));
    expect(await grpcTrue(port, 'ServerLive'), 'ServerLive is not true');
    expect(await grpcTrue(port, 'ServerReady'), 'ServerReady is not true');
  });
  await check(`the HPA's ${hpa.spec.metrics[0].pods.metric.name} comes from series the ServiceMonitor scrapes (${adapterSeries.join(', ')})`, async () => {
    expect(adapterRule, `no adapter rule names ${hpa.spec.metrics[0].pods.metric.name}`);
    const endpoint = serviceMonitor.spec.endpoints[0];
    const servicePort = service.spec.ports.find((p) => p.name === endpoint.port);
    expect(servicePort, `the Service has no port ${endpoint.port}`);
    const metrics = await get(`http://127.0.0.1:${hostPorts.get(containerPort(servicePort.targetPort))}${endpoint.path}`);
    expect(metrics.status === 200, `${endpoint.path}: ${metrics.status}`);
    for (const series of adapterSeries) expect(sample(metrics.text, series, 'tiny') !== null, `${series} has no sample for model tiny`);
    const success = sample(metrics.text, 'nv_inference_request_success', 'tiny');
    expect(success >= 1, `nv_inference_request_success{model="tiny"} is ${success} after one inference`);
    return adapterSeries.map((series) => `${series}{model="tiny"} ${sample(metrics.text, series, 'tiny')}`).join(', ');
  });

  await check(`SIGTERM with a request in flight: readiness fails at once, the request completes, the container exits 0 within terminationGracePeriodSeconds (${pod.terminationGracePeriodSeconds} s)`, async () => {
    const http = `http://127.0.0.1:${hostPorts.get(containerPort('http'))}`;
    const readiness = `http://127.0.0.1:${probePort(container.readinessProbe, hostPorts)}${container.readinessProbe.httpGet.path}`;
    const inFlight = post(`${http}/v2/models/slow/infer`, slowRequest);
    const waitUntil = Date.now() + 30_000;
    while (podman(['exec', name, 'test', '-e', '/tmp/slow.executing']).status !== 0) {
      expect(Date.now() < waitUntil, 'the slow model never started executing');
      await sleep(100);
    }
    const signalled = Date.now();
    const killed = podman(['kill', '--signal', 'TERM', name]);
    expect(killed.status === 0, `podman kill: ${killed.stderr}`);
    let notReadyAfter = null;
    while (Date.now() - signalled < container.readinessProbe.periodSeconds * 1000) {
      const answer = await get(readiness);
      if (answer.status !== 200) {
        notReadyAfter = Date.now() - signalled;
        break;
      }
      await sleep(50);
    }
    expect(notReadyAfter !== null, `readiness still 200 ${container.readinessProbe.periodSeconds} s after SIGTERM`);
    const refused = await post(`${http}/v2/models/tiny/infer`, tinyRequest);
    expect(refused.status === 503, `a new request during the drain got ${refused.status} ${refused.text}`);
    const answered = await inFlight;
    expect(answered.status === 200 && JSON.stringify(JSON.parse(answered.text).outputs[0].data) === '[1,2,3,4]', `the in-flight request got ${answered.status} ${answered.text}`);
    const waited = podman(['wait', name], { timeout: (pod.terminationGracePeriodSeconds + 30) * 1000 });
    const exitedAfter = (Date.now() - signalled) / 1000;
    figures.drainSeconds = exitedAfter;
    const code = Number(waited.stdout.trim());
    expect(code === 0, `exit status ${waited.stdout.trim() || waited.stderr}:\n${logsOf(name)}`);
    expect(exitedAfter < pod.terminationGracePeriodSeconds, `exited ${exitedAfter.toFixed(1)} s after SIGTERM`);
    expect(/Signal \(15\) received/.test(logsOf(name)), 'no "Signal (15) received." line');
    return `readiness refused after ${notReadyAfter} ms, a new request 503, the in-flight one answered, exit 0 after ${exitedAfter.toFixed(1)} s`;
  });
  podman(['rm', '-f', name]);
  containers.delete(name);

  // ------------------------------------------------------------------ The KServe ServingRuntime.
  const runtimeContainer = servingRuntime.spec.containers[0];
  const argument = (flag) => runtimeContainer.args.find((arg) => arg.startsWith(`--${flag}=`))?.split('=')[1];
  const kserveName = `tritium-check-kserve-${suffix}`;
  const httpPort = Number(argument('http-port') ?? 8000);
  const grpcPort = Number(argument('grpc-port') ?? 8001);
  const metricsPort = Number(servingRuntime.spec.annotations['prometheus.kserve.io/port']);
  const metricsPath = servingRuntime.spec.annotations['prometheus.kserve.io/path'];
  const kservePorts = start(kserveName, {
    command: runtimeContainer.command,
    args: runtimeContainer.args,
    user: String(runtimeContainer.securityContext.runAsUser),
    groups: [],
    mounts: [{ source: repository, target: argument('model-repository'), readOnly: true }],
    ports: [httpPort, grpcPort, metricsPort],
    resources: runtimeContainer.resources?.limits,
    capDrop: runtimeContainer.securityContext?.capabilities?.drop,
    noNewPrivileges: runtimeContainer.securityContext?.allowPrivilegeEscalation === false,
  });
  log(`running ${kserveName}: ${runtimeContainer.command.join(' ')} ${runtimeContainer.args.join(' ')}`);
  await check(`the ServingRuntime's container serves ${argument('model-repository')} on HTTP ${httpPort}, gRPC ${grpcPort} and metrics ${metricsPort}${metricsPath}`, async () => {
    const begun = Date.now();
    const ready = `http://127.0.0.1:${kservePorts.get(httpPort)}/v2/health/ready`;
    while ((await get(ready)).status !== 200) {
      if (!state(kserveName).Running) throw new Error(`the container exited (${state(kserveName).ExitCode}):\n${logsOf(kserveName)}`);
      expect(Date.now() - begun < 300_000, `${ready} not 200 after 5 minutes`);
      await sleep(250);
    }
    expect(await grpcTrue(kservePorts.get(grpcPort), 'ServerReady'), 'gRPC ServerReady is not true');
    const answer = await post(`http://127.0.0.1:${kservePorts.get(httpPort)}/v2/models/tiny/infer`, tinyRequest);
    expect(answer.status === 200, `inference: ${answer.status} ${answer.text}`);
    const metrics = await get(`http://127.0.0.1:${kservePorts.get(metricsPort)}${metricsPath}`);
    expect(sample(metrics.text, 'nv_inference_request_success', 'tiny') >= 1, `${metricsPath}: no nv_inference_request_success for tiny`);
    const uid = podman(['exec', kserveName, 'id', '-u']).stdout.trim();
    expect(Number(uid) === runtimeContainer.securityContext.runAsUser, `uid ${uid}`);
    podman(['kill', '--signal', 'TERM', kserveName]);
    const code = podman(['wait', kserveName], { timeout: 60_000 }).stdout.trim();
    expect(code === '0', `exit status ${code} after SIGTERM`);
    return `ready after ${((Date.now() - begun) / 1000).toFixed(1)} s, uid ${uid}, exit 0 on SIGTERM`;
  });
} catch (error) {
  failures.push('setup');
  log(`FAIL ${error instanceof Error ? error.message : String(error)}`);
} finally {
  for (const name of containers) podman(['rm', '-f', '-t', '0', name]);
  rmSync(repository, { recursive: true, force: true });
  if (!flags.has('image') && !flags.has('keep-image')) podman(['rmi', image]);
}

log(
  `figures: image ${mib(figures.imageBytes)}` +
    (figures.buildSeconds !== undefined ? `, build ${figures.buildSeconds} s` : '') +
    (figures.startupSeconds !== undefined ? `, startup ${figures.startupSeconds.toFixed(1)} s` : '') +
    (figures.drainSeconds !== undefined ? `, SIGTERM to exit ${figures.drainSeconds.toFixed(1)} s (grace ${pod.terminationGracePeriodSeconds} s)` : ''),
);
if (failures.length) {
  log(`${failures.length} failed, ${passed} passed`);
  process.exit(1);
}
log(`all ${passed} checks passed`);
