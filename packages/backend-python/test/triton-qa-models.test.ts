import { describe, expect, it } from 'vitest';
import { bytesElementToString, InferenceError, type Tensor } from '@tritium/core';
import { pythonBackend } from '@tritium/backend-python';
import { pythonMissing, usePythonServer } from './helpers.js';

const MiB = 1 << 20;
const fp32 = (...values: number[]): Tensor => ({ datatype: 'FP32', shape: [values.length], data: new Float32Array(values) });
const values = (tensor: Tensor | undefined) => Array.from(tensor!.data as ArrayLike<number | bigint>);

describe.skipIf(pythonMissing)("Triton's QA habits in Python models", () => {
  const python = usePythonServer();

  it("gives models Triton's sys.argv (['']): argparse and unittest.main() run in initialize(); BLS takes bytes for names", async () => {
    const server = await python.start(['qa_style', 'add_sub']);
    const response = await server.infer('qa_style', { inputs: { INPUT0: fp32(1, 2, 3, 4), INPUT1: fp32(10, 20, 30, 40) } });
    expect(values(response.outputs.OUTPUT0)).toEqual([11, 22, 33, 44]);
    expect(values(response.outputs.OUTPUT1)).toEqual([-9, -18, -27, -36]);
    expect(JSON.parse(bytesElementToString((response.outputs.TESTS!.data as Uint8Array[])[0]!))).toEqual({ run: 3, ok: true });
  });

  it("passes Triton's init_args QA model its checks (instance <group>_<index>: init_args_0_0)", async () => {
    const server = await python.start(['init_args']);
    const response = await server.infer('init_args', { inputs: { IN: { datatype: 'FP32', shape: [1, 1], data: new Float32Array([0]) } } });
    expect(values(response.outputs.OUT)).toEqual([7]);
  });
});

describe.skipIf(pythonMissing)('shared-memory sizes (shm-default-byte-size, shm-growth-byte-size)', () => {
  const python = usePythonServer();

  it('starts both arenas at sharedMemoryDefaultBytes and grows them by whole sharedMemoryGrowthBytes steps', async () => {
    const server = await python.start(['arena_sizes'], { python: { sharedMemoryDefaultBytes: 3 * MiB, sharedMemoryGrowthBytes: MiB } });
    const send = async (byteLength: number) => {
      const response = await server.infer('arena_sizes', { inputs: { IN: { datatype: 'UINT8', shape: [byteLength], data: new Uint8Array(byteLength).fill(7) } } });
      expect((response.outputs.OUT!.data as Uint8Array).every((byte) => byte === 7)).toBe(true);
      return values(response.outputs.SIZES).map(Number);
    };
    // [Node's region holding IN, the stub's region as the previous response left it]
    expect(await send(100)).toEqual([3 * MiB, 0]);
    // 3.5 MiB does not fit in 3 MiB: Triton's rule adds growth × (3.5 MiB / growth + 1) = 4 MiB.
    expect(await send(3.5 * MiB)).toEqual([7 * MiB, 3 * MiB]);
    expect(await send(100)).toEqual([7 * MiB, 7 * MiB]);
  });
});

describe('shared-memory size options', () => {
  it("refuses sizes Triton refuses, with Triton's reasons", () => {
    const refusal = (options: Parameters<typeof pythonBackend>[0]) => {
      try {
        pythonBackend(options);
      } catch (error) {
        return error;
      }
      return undefined;
    };
    const small = refusal({ sharedMemoryDefaultBytes: MiB - 1 });
    expect(small).toBeInstanceOf(InferenceError);
    expect(small).toMatchObject({ code: 'INVALID_ARG', message: expect.stringContaining("shm-default-byte-size) can't be smaller than 1 MiB") });
    expect(refusal({ sharedMemoryGrowthBytes: 0 })).toMatchObject({ code: 'INVALID_ARG', message: expect.stringContaining("shm-growth-byte-size) can't be smaller than or equal to zero") });
    expect(refusal({ sharedMemoryGrowthBytes: 1.5 })).toBeInstanceOf(InferenceError);
    expect(refusal({ sharedMemoryDefaultBytes: MiB, sharedMemoryGrowthBytes: 1 })).toBeUndefined();
  });
});
