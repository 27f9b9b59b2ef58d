import { readFile } from 'node:fs/promises';
import { InferenceError } from '@tritium/core/backend';
import type * as OrtApi from 'onnxruntime-node';
import { BindingSession } from './binding-session.js';
import { readExternalData, type ExternalDataFile } from './external-data.js';

/** Which onnxruntime package serves a model: the native binding or WebAssembly. */
export type RuntimeKind = 'node' | 'web';

/** The onnxruntime JavaScript API; onnxruntime-node and onnxruntime-web share it (onnxruntime-common). */
export type Ort = typeof OrtApi;
export type OrtSession = OrtApi.InferenceSession;
export type OrtSessionOptions = OrtApi.InferenceSession.SessionOptions;
export type OrtTensor = OrtApi.Tensor;
export type OrtFeeds = OrtApi.InferenceSession.FeedsType;
export type OrtResults = OrtApi.InferenceSession.ReturnType;

/** What InferenceSession.create takes for a model: its path, or its bytes and external data files. */
export interface SessionSource {
  readonly model: string | Uint8Array;
  readonly externalData?: readonly ExternalDataFile[];
}

/** One loaded onnxruntime package. */
export interface OrtRuntime {
  readonly kind: RuntimeKind;
  readonly ort: Ort;
  /** e.g. "onnxruntime-node 1.30.0". */
  readonly label: string;
  /** The package a worker thread imports to run this runtime's sessions. */
  readonly packageName: 'onnxruntime-node' | 'onnxruntime-web';
  /** onnxruntime-web's process-wide settings, which each worker thread repeats for its own copy. */
  readonly wasm?: { readonly paths?: string; readonly numThreads?: number };
  /**
   * The execution providers the package knows. Whether their libraries are installed
   * shows only when a session asks for one: onnxruntime-node lists CUDA and TensorRT
   * as not bundled, yet its install script can add their libraries afterwards.
   */
  readonly providers: ReadonlySet<string>;
  /** The execution provider that runs on the CPU: 'cpu' (native) or 'wasm'. */
  readonly cpuProvider: string;
  /** Opens a model file on this thread as onnxruntime-node's binding session, run synchronously; undefined where the binding cannot be reached (onnxruntime-web, a replaced loader, another binding shape). */
  readonly openBindingSession?: (path: string, options: OrtSessionOptions) => BindingSession;
  /** The model as this runtime opens it: onnxruntime-node reads files itself, onnxruntime-web is handed bytes. */
  sessionSource(modelFile: string, modelName: string): Promise<SessionSource>;
  /** Creates a session on this thread. */
  createSession(source: SessionSource, options: OrtSessionOptions): Promise<OrtSession>;
  run(session: OrtSession, feeds: OrtFeeds, fetches: readonly string[]): Promise<OrtResults>;
  release(session: OrtSession): Promise<void>;
}

export interface RuntimeLoaderOptions {
  /** Loads onnxruntime-node; replaceable so tests (and odd platforms) can make it fail. */
  readonly loadNative?: () => Promise<unknown>;
  /** Loads onnxruntime-web. */
  readonly loadWeb?: () => Promise<unknown>;
  /**
   * Where onnxruntime-web finds its .wasm/.mjs files (`env.wasm.wasmPaths`). In Node
   * it finds them by itself next to its own module file, with no network, so this is
   * only needed when the package was bundled or moved.
   */
  readonly wasmPaths?: string;
  /** `env.wasm.numThreads` for onnxruntime-web; a process-wide setting. */
  readonly wasmNumThreads?: number;
}

/** A runtime, and why another one stands in for the one that was wanted. */
export interface SelectedRuntime {
  readonly runtime: OrtRuntime;
  readonly fallbackReason?: string;
}

/**
 * Loads each onnxruntime package once, on first use, and picks one for a model:
 * the one it asks for, else onnxruntime-node, else (the native binding failing to
 * load) onnxruntime-web.
 */
export class RuntimeLoader {
  private native?: Promise<OrtRuntime>;
  private web?: Promise<OrtRuntime>;

  constructor(private readonly options: RuntimeLoaderOptions = {}) {}

  async select(requested: RuntimeKind | 'auto'): Promise<SelectedRuntime> {
    if (requested === 'web') return { runtime: await this.loadWeb() };
    if (requested === 'node') return { runtime: await this.loadNative() };
    try {
      return { runtime: await this.loadNative() };
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return { runtime: await this.loadWeb(), fallbackReason: reason };
    }
  }

  loadNative(): Promise<OrtRuntime> {
    this.native ??= (async () => {
      let mod: unknown;
      try {
        mod = await (this.options.loadNative ?? (() => import('onnxruntime-node')))();
      } catch (error) {
        throw new InferenceError('UNAVAILABLE', `onnxruntime-node cannot load its native binding: ${(error as Error).message}`, {
          cause: error,
        });
      }
      const ort = moduleOf(mod);
      return {
        kind: 'node',
        ort,
        label: `onnxruntime-node ${ort.env.versions.node ?? ort.env.versions.common}`,
        packageName: 'onnxruntime-node',
        providers: new Set((ort.listSupportedBackends?.() ?? [{ name: 'cpu' }]).map((b) => b.name)),
        cpuProvider: 'cpu',
        sessionSource: async (modelFile) => ({ model: modelFile }),
        createSession: (source, options) => ort.InferenceSession.create(source.model as string, options),
        run: (session, feeds, fetches) => session.run(feeds, fetches),
        release: (session) => session.release(),
        // Only the package this module resolves itself: a replaced loader may have loaded another.
        openBindingSession: this.options.loadNative ? undefined : BindingSession.opener(ort),
      } satisfies OrtRuntime;
    })();
    return this.native;
  }

  loadWeb(): Promise<OrtRuntime> {
    this.web ??= (async () => {
      let mod: unknown;
      try {
        mod = await (this.options.loadWeb ?? (() => import('onnxruntime-web')))();
      } catch (error) {
        // An optional peer: installed only by those who want the WebAssembly fallback.
        const missing = (error as { code?: string }).code === 'ERR_MODULE_NOT_FOUND' || (error as { code?: string }).code === 'MODULE_NOT_FOUND';
        const hint = missing ? ' (it is an optional peer of @tritium/backend-onnx: npm install onnxruntime-web@1.30.0)' : '';
        throw new InferenceError('UNAVAILABLE', `onnxruntime-web cannot be loaded${hint}: ${(error as Error).message}`, { cause: error });
      }
      const ort = moduleOf(mod);
      if (this.options.wasmPaths !== undefined) ort.env.wasm.wasmPaths = this.options.wasmPaths;
      if (this.options.wasmNumThreads !== undefined) ort.env.wasm.numThreads = this.options.wasmNumThreads;
      const version = (ort.env.versions as Record<string, string | undefined>).web ?? ort.env.versions.common;
      const serial = serialQueueOf(ort);
      return {
        kind: 'web',
        ort,
        label: `onnxruntime-web ${version} (WebAssembly)`,
        providers: new Set(['wasm']),
        cpuProvider: 'wasm',
        packageName: 'onnxruntime-web',
        wasm: { paths: this.options.wasmPaths, numThreads: this.options.wasmNumThreads },
        // The wasm runtime has no file system of its own: the model and its
        // external data files are read here and handed over as bytes.
        sessionSource: async (modelFile, modelName) => {
          const file = await readFile(modelFile);
          const model = new Uint8Array(file.buffer, file.byteOffset, file.byteLength);
          const externalData = await readExternalData(modelName, modelFile, model);
          return externalData.length > 0 ? { model, externalData } : { model };
        },
        createSession: (source, options) =>
          serial(() =>
            ort.InferenceSession.create(source.model as Uint8Array, source.externalData ? { ...options, externalData: [...source.externalData] } : options),
          ),
        run: (session, feeds, fetches) => serial(() => session.run(feeds, fetches)),
        release: (session) => serial(() => session.release()),
      } satisfies OrtRuntime;
    })();
    return this.web;
  }
}

type Serial = <T>(operation: () => Promise<T>) => Promise<T>;

const serialQueues = new WeakMap<Ort, Serial>();

/**
 * onnxruntime-web runs every session in one WebAssembly module, and operations that
 * overlap in it fail ("Cannot read properties of null", "failed to call OrtRun()"),
 * on one session or across sessions. So each loaded module gets one queue that runs
 * its session operations one at a time, in order; a failure does not stop the queue.
 */
function serialQueueOf(ort: Ort): Serial {
  let serial = serialQueues.get(ort);
  if (!serial) {
    let tail: Promise<unknown> = Promise.resolve();
    serial = (operation) => {
      const result = tail.then(operation);
      tail = result.catch(() => undefined);
      return result;
    };
    serialQueues.set(ort, serial);
  }
  return serial;
}

/** An ESM namespace of a CommonJS package holds the API under `default`. */
function moduleOf(mod: unknown): Ort {
  const m = mod as Ort & { default?: Ort };
  return (m.InferenceSession ? m : m.default) as Ort;
}
