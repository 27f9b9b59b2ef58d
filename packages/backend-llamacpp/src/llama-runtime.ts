import { InferenceError } from '@tritium/core/backend';
import type { Llama } from 'node-llama-cpp';

type NodeLlamaCpp = typeof import('node-llama-cpp');

const INSTALL_HINT =
  'install node-llama-cpp with its prebuilt binary for this platform (`npm install node-llama-cpp`; on Linux x64 the binary is @node-llama-cpp/linux-x64)';

/** node-llama-cpp, imported when the first model needs it: the package imports without it. */
export async function importNodeLlamaCpp(): Promise<NodeLlamaCpp> {
  try {
    return await import('node-llama-cpp');
  } catch (error) {
    throw new InferenceError('UNAVAILABLE', `the llamacpp backend needs node-llama-cpp, which could not be loaded (${(error as Error).message}): ${INSTALL_HINT}`, { cause: error });
  }
}

/**
 * llama.cpp on the CPU from the prebuilt binary node-llama-cpp ships in its platform
 * package. Nothing is downloaded or built at run time: without a usable binary this
 * fails saying what to install, instead of fetching llama.cpp's sources.
 */
export async function startLlama(): Promise<Llama> {
  const { getLlama, LlamaLogLevel } = await importNodeLlamaCpp();
  try {
    // maxThreads 0: each context's own `threads` decides (node-llama-cpp would cap it at max(cores, 4)).
    return await getLlama({ gpu: false, build: 'never', skipDownload: true, usePrebuiltBinaries: true, progressLogs: false, logLevel: LlamaLogLevel.error, maxThreads: 0 });
  } catch (error) {
    throw new InferenceError('UNAVAILABLE', `the llamacpp backend found no usable llama.cpp binary (${(error as Error).message}): ${INSTALL_HINT}`, { cause: error });
  }
}
