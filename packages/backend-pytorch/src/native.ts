import { fileURLToPath } from 'node:url';
import { loadAddon } from '@tritium/native-addon';
import type { ForwardArgument } from './naming.js';

/** A tensor crossing the addon: its name, a Triton datatype name, a shape, and its bytes; BYTES as its elements (forward() gets List[str]). */
export interface NativeTensor {
  readonly name: string;
  readonly datatype: string;
  readonly shape: readonly number[];
  readonly data: ArrayBufferView | readonly (string | Uint8Array)[];
}

/** What the addon answers for each output: the bytes are a new ArrayBuffer copied from libtorch; a List[str] is BYTES, shape [length]. */
export interface NativeOutput {
  /** A Triton datatype name, or `torch.<dtype>` for one Triton lacks. */
  readonly datatype: string;
  readonly shape: number[];
  readonly data: ArrayBuffer | Uint8Array[];
}

/** The per-run switches of Triton's parameters; an absent JIT switch leaves libtorch's setting. */
export interface RunOptions {
  readonly inferenceMode: boolean;
  readonly optimizedExecution: boolean;
  readonly tensorFuser?: boolean;
  readonly jitExecutor?: boolean;
  readonly jitProfiling?: boolean;
  /** Empty libtorch's device memory cache after each run on a GPU. */
  readonly cacheCleaning: boolean;
  /** forward() takes one Dict[str, Tensor] of the inputs by name. */
  readonly dictInput?: boolean;
}

/** A loaded TorchScript module. */
export interface ScriptModule {
  /** forward()'s arguments, without self. */
  arguments(): ForwardArgument[];
  /** Drops the module once runs in flight end. */
  release(): void;
}

/** An instance's own native thread, for one module and its run options: its runs happen there one at a time, in order. */
export interface InstanceThread {
  /** The module's forward() on the inputs (read in place: keep them unchanged until it settles); its tensors flattened in order. */
  forward(inputs: readonly NativeTensor[]): Promise<NativeOutput[]>;
  /** forward() run now on the calling thread, not the instance's: the promise is settled when this returns. */
  forwardHere(inputs: readonly NativeTensor[]): Promise<NativeOutput[]>;
  /** Ends the thread once the runs already queued are done, and settles when it has; forward() then throws. */
  close(): Promise<void>;
}

export interface TorchAddon {
  /** torch::jit::load onto a device ("cpu", "cuda:0"), off the event loop. */
  load(path: string, device: string): Promise<ScriptModule>;
  /** Starts a thread for an instance's runs. */
  InstanceThread: new (module: ScriptModule, options: RunOptions) => InstanceThread;
  /** at::set_num_threads / set_num_interop_threads; 0 leaves one alone. Throws where libtorch refuses. */
  setThreads(intra: number, inter: number): void;
  threads(): { intra: number; inter: number };
  disableCudnn(disabled: boolean): void;
  /** 0 where libtorch has no CUDA or no GPU is present. */
  cudaDeviceCount(): number;
  readonly torchVersion: string;
}

// src/native.ts under vitest and tsx, dist/index.{js,cjs} once built: both one level
// below the package root, where cmake-js puts build/Release (and the install script its
// native-build.json and native-build.log).
const PACKAGE_ROOT = fileURLToPath(new URL('..', import.meta.url));
const ADDON_URL = new URL('../build/Release/torchscript.node', import.meta.url);

let addon: TorchAddon | undefined;

/** Loads the addon on first use; throws an Error saying what is missing, what failed at install, and how to build it. */
export function loadTorchAddon(): TorchAddon {
  addon ??= loadAddonFrom(fileURLToPath(ADDON_URL));
  return addon;
}

/** The loader behind loadTorchAddon, with the path (and package root) given: tests point it elsewhere. */
export function loadAddonFrom(path: string, packageRoot = PACKAGE_ROOT): TorchAddon {
  return loadAddon<TorchAddon>({
    path,
    packageRoot,
    packageName: '@tritium/backend-pytorch',
    what: 'the TorchScript addon',
    needs: 'install the torch Python package (`pip install torch`; the CPU wheel will do), cmake and a C++ compiler',
  });
}
