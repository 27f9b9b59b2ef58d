import { emitTritiumWarning } from '@tritium/core/backend';
import type { TorchAddon } from './native.js';
import type { TorchParameters } from './parameters.js';

/** The thread counts set in this process, each on its own: libtorch takes them once, so the first model giving one wins, as in Triton. */
const chosen = { INTRA_OP_THREAD_COUNT: 0, INTER_OP_THREAD_COUNT: 0 };

/** Applies a model's INTRA_OP_THREAD_COUNT / INTER_OP_THREAD_COUNT where no model gave that one before; a later, different value is warned of and ignored. */
export function applyThreadCounts(model: string, parameters: TorchParameters, addon: TorchAddon): void {
  const asked = { INTRA_OP_THREAD_COUNT: parameters.intraOpThreads, INTER_OP_THREAD_COUNT: parameters.interOpThreads };
  const apply = { INTRA_OP_THREAD_COUNT: 0, INTER_OP_THREAD_COUNT: 0 };
  for (const key of ['INTRA_OP_THREAD_COUNT', 'INTER_OP_THREAD_COUNT'] as const) {
    if (asked[key] === 0) continue;
    if (chosen[key] === 0) apply[key] = chosen[key] = asked[key];
    else if (chosen[key] !== asked[key]) emitTritiumWarning('TRITIUM_W015', `model '${model}': ${key} is set once per process; the first model's ${chosen[key]} stays`);
  }
  if (apply.INTRA_OP_THREAD_COUNT === 0 && apply.INTER_OP_THREAD_COUNT === 0) return;
  try {
    addon.setThreads(apply.INTRA_OP_THREAD_COUNT, apply.INTER_OP_THREAD_COUNT);
  } catch (error) {
    emitTritiumWarning('TRITIUM_W016', `model '${model}': libtorch refused the thread counts (${error instanceof Error ? error.message : String(error)})`);
  }
}
