import type { Logger } from '@tritium/core';
import type { TorchAddon } from './native.js';
import type { TorchParameters } from './parameters.js';

/** The thread counts set in this process: libtorch takes them once, so the first model's values win, as in Triton. */
let chosen: { intra: number; inter: number } | undefined;

/** Applies a model's INTRA_OP_THREAD_COUNT / INTER_OP_THREAD_COUNT the first time any model gives one; later ones are logged and ignored. */
export function applyThreadCounts(model: string, parameters: TorchParameters, addon: TorchAddon, logger: Logger): void {
  const { intraOpThreads: intra, interOpThreads: inter } = parameters;
  if (intra === 0 && inter === 0) return;
  if (chosen) {
    if (chosen.intra !== intra || chosen.inter !== inter) {
      logger.warn(`model '${model}': INTRA_OP_THREAD_COUNT/INTER_OP_THREAD_COUNT are set once per process; the first model's (${chosen.intra}/${chosen.inter}) stay`);
    }
    return;
  }
  chosen = { intra, inter };
  try {
    addon.setThreads(intra, inter);
  } catch (error) {
    logger.warn(`model '${model}': libtorch refused the thread counts (${error instanceof Error ? error.message : String(error)})`);
  }
}
