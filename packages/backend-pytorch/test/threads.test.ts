import { describe, expect, it } from 'vitest';
import { captureWarnings } from '../../core/test/helpers/warnings.js';
import type { TorchAddon } from '../src/native.js';
import { torchParameters } from '../src/parameters.js';
import { applyThreadCounts } from '../src/threads.js';

describe('INTRA_OP_THREAD_COUNT / INTER_OP_THREAD_COUNT', () => {
  it('sets each once per process, from the first model that gives it', () => {
    const calls: Array<[number, number]> = [];
    const warnings = captureWarnings();
    const addon = { setThreads: (intra: number, inter: number) => calls.push([intra, inter]) } as unknown as TorchAddon;
    const apply = (model: string, key: string, value: string) =>
      applyThreadCounts(model, torchParameters({ name: model, parameters: { [key]: { string_value: value } } }), addon);
    apply('a', 'INTRA_OP_THREAD_COUNT', '2');
    apply('b', 'INTER_OP_THREAD_COUNT', '4');
    apply('c', 'INTRA_OP_THREAD_COUNT', '3');
    expect(calls).toEqual([[2, 0], [0, 4]]);
    expect(warnings).toEqual([{ code: 'TRITIUM_W015', message: "model 'c': INTRA_OP_THREAD_COUNT is set once per process; the first model's 2 stays" }]);
  });
});
