import { InferenceError, booleanParameter, integerParameter, invalidParameter, modelParameter } from '@tritium/core/backend';
import type { NormalizedModelConfig } from '@tritium/core/backend';
import type { OrtRuntime, OrtSessionOptions } from './runtime.js';

/** The instance placement a session is made for. */
export interface Placement {
  /** KIND_CPU, KIND_GPU, ... (KIND_AUTO and KIND_MODEL are served as CPU). */
  readonly kind: string;
  readonly deviceId?: number;
}

/** The accelerators Triton's ONNX Runtime backend knows, by config section. */
const GPU_ACCELERATORS = new Set(['tensorrt', 'cuda']);
const CPU_ACCELERATORS = new Set(['openvino']);

/**
 * Session options from a model config, by the names Triton's ONNX Runtime backend uses:
 *
 * - `optimization { graph { level } }`: -1 basic, 1 extended, 2 disabled, else all;
 * - parameters `intra_op_thread_count`, `inter_op_thread_count` (0 = onnxruntime's default),
 *   `execution_mode` (0 sequential, 1 parallel), `enable_mem_arena`, `enable_mem_pattern`,
 *   and any `session.*` key as a session config entry
 *   (e.g. `session.use_device_allocator_for_initializers`);
 * - without `intra_op_thread_count`, `defaultIntraOpThreads` (the execution pool's
 *   share of the cores per thread: onnxruntime-node gives each session a thread pool
 *   of its own, so more would multiply threads by sessions);
 * - `optimization { execution_accelerators }` as execution providers, GPU ones for GPU
 *   instances only (as Triton), refused when the runtime lacks them.
 */
export function sessionOptionsFor(config: NormalizedModelConfig, runtime: OrtRuntime, placement: Placement, defaultIntraOpThreads: number): OrtSessionOptions {
  const options: {
    -readonly [K in keyof OrtSessionOptions]: OrtSessionOptions[K];
  } = {
    graphOptimizationLevel: graphLevel(config.optimization?.graph?.level),
    executionMode: executionMode(config),
    executionProviders: executionProviders(config, runtime, placement),
    // Warnings (e.g. unused initializers) are not errors; keep them off stderr.
    logSeverityLevel: 3,
  };
  const intra = threadCount(config, 'intra_op_thread_count') ?? defaultIntraOpThreads;
  const inter = threadCount(config, 'inter_op_thread_count');
  // onnxruntime-web has one process-wide thread setting (env.wasm.numThreads), no per-session one.
  if (runtime.kind === 'node' && intra) options.intraOpNumThreads = intra;
  if (runtime.kind === 'node' && inter) options.interOpNumThreads = inter;
  const memArena = booleanParameter(config, 'enable_mem_arena');
  if (memArena !== undefined) options.enableCpuMemArena = memArena;
  const memPattern = booleanParameter(config, 'enable_mem_pattern');
  if (memPattern !== undefined) options.enableMemPattern = memPattern;
  const entries = sessionConfigEntries(config);
  if (entries) options.extra = entries;
  return options;
}

/** Triton's mapping of `optimization.graph.level`. */
export function graphLevel(level: number | undefined): NonNullable<OrtSessionOptions['graphOptimizationLevel']> {
  switch (level) {
    case -1:
      return 'basic';
    case 1:
      return 'extended';
    case 2:
      return 'disabled';
    default:
      return 'all';
  }
}

function executionMode(config: NormalizedModelConfig): 'sequential' | 'parallel' {
  const mode = integerParameter(config, 'execution_mode') ?? 0;
  if (mode === 0) return 'sequential';
  if (mode === 1) return 'parallel';
  throw invalidParameter(config, 'execution_mode', String(mode), '0 (sequential) or 1 (parallel)');
}

function threadCount(config: NormalizedModelConfig, key: string): number | undefined {
  const count = integerParameter(config, key);
  if (count === undefined || count === 0) return undefined;
  if (count < 0) throw invalidParameter(config, key, String(count), 'a thread count >= 0 (0: onnxruntime picks)');
  return count;
}

/** `session.a.b` parameters become `extra: { session: { 'a.b': value } }`, i.e. the config entry `session.a.b`. */
function sessionConfigEntries(config: NormalizedModelConfig): Record<string, Record<string, string>> | undefined {
  const session: Record<string, string> = {};
  for (const key of Object.keys(config.parameters)) {
    if (!key.startsWith('session.')) continue;
    session[key.slice('session.'.length)] = modelParameter(config, key) ?? '';
  }
  return Object.keys(session).length > 0 ? { session } : undefined;
}

/** The execution providers a session asks for, best first, the CPU one last. */
export function executionProviders(config: NormalizedModelConfig, runtime: OrtRuntime, placement: Placement): Array<string | { name: string; deviceId?: number }> {
  const accelerators = config.optimization?.execution_accelerators;
  const providers: Array<string | { name: string; deviceId?: number }> = [];
  const modelName = config.name;

  for (const ea of accelerators?.gpu_execution_accelerator ?? []) {
    if (!GPU_ACCELERATORS.has(ea.name)) throw unknownAccelerator(modelName, ea.name, 'gpu_execution_accelerator');
  }
  for (const ea of accelerators?.cpu_execution_accelerator ?? []) {
    if (!CPU_ACCELERATORS.has(ea.name)) throw unknownAccelerator(modelName, ea.name, 'cpu_execution_accelerator');
  }

  if (placement.kind === 'KIND_GPU') {
    // As Triton: GPU accelerators in order, then CUDA, for GPU instances only.
    const names = (accelerators?.gpu_execution_accelerator ?? []).map((ea) => ea.name);
    if (!names.includes('cuda')) names.push('cuda');
    for (const name of names) {
      requireProvider(runtime, name, modelName);
      providers.push({ name, deviceId: placement.deviceId ?? 0 });
    }
  }
  for (const ea of accelerators?.cpu_execution_accelerator ?? []) {
    requireProvider(runtime, ea.name, modelName);
    providers.push(ea.name);
  }
  providers.push(runtime.cpuProvider);
  return providers;
}

function requireProvider(runtime: OrtRuntime, name: string, modelName: string): void {
  if (!runtime.providers.has(name)) {
    const what = runtime.kind === 'web' ? 'onnxruntime-web (WebAssembly) runs on the CPU only' : `${runtime.label} has no '${name}' execution provider`;
    throw new InferenceError('UNSUPPORTED', `model '${modelName}': execution accelerator '${name}' is not supported: ${what}`);
  }
}

function unknownAccelerator(modelName: string, name: string, section: string): InferenceError {
  const known = section === 'gpu_execution_accelerator' ? [...GPU_ACCELERATORS] : [...CPU_ACCELERATORS];
  return new InferenceError(
    'INVALID_ARG',
    `model '${modelName}': unknown execution accelerator '${name}' is requested in ${section}, the ONNX backend knows ${known.map((k) => `'${k}'`).join(', ')}`,
  );
}

/** The non-CPU providers in a session's options, to explain a failure to create it. */
export function acceleratorNames(options: OrtSessionOptions): string[] {
  return (options.executionProviders ?? [])
    .map((p) => (typeof p === 'string' ? p : p.name))
    .filter((name) => name !== 'cpu' && name !== 'wasm');
}
