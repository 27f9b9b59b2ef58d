import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { bytesElementToString, toFp16 } from '@tritium/core';
import type { DataType, Tensor, TensorData } from '@tritium/core';
import { ServerHarness } from './server-harness.js';

/** Three rows per type, with each type's extremes and awkward values (NaN, -0, subnormals, non-ASCII). */
const ROWS: Record<Exclude<DataType, 'BF16'>, () => TensorData> = {
  BOOL: () => Uint8Array.from([1, 0, 1, 0, 0, 1]),
  UINT8: () => Uint8Array.from([0, 1, 127, 128, 254, 255]),
  UINT16: () => Uint16Array.from([0, 1, 32767, 32768, 65534, 65535]),
  UINT32: () => Uint32Array.from([0, 1, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 2, 2 ** 32 - 1]),
  UINT64: () => BigUint64Array.from([0n, 1n, 2n ** 53n + 1n, 2n ** 63n, 2n ** 64n - 2n, 2n ** 64n - 1n]),
  INT8: () => Int8Array.from([-128, -1, 0, 1, 126, 127]),
  INT16: () => Int16Array.from([-32768, -1, 0, 1, 32766, 32767]),
  INT32: () => Int32Array.from([-(2 ** 31), -1, 0, 1, 2 ** 31 - 2, 2 ** 31 - 1]),
  INT64: () => BigInt64Array.from([-(2n ** 63n), -1n, 0n, 2n ** 53n + 1n, 2n ** 63n - 2n, 2n ** 63n - 1n]),
  // Bit patterns: 1.5, -2, 65504 (max), +inf, -0, the smallest subnormal.
  FP16: () => Uint16Array.from([...toFp16([1.5, -2, 65504]), 0x7c00, 0x8000, 0x0001]),
  FP32: () => Float32Array.from([1.5, -0, Infinity, NaN, 3.4028234663852886e38, 1.401298464324817e-45]),
  FP64: () => Float64Array.from([Math.PI, -0, -Infinity, NaN, Number.MAX_VALUE, Number.MIN_VALUE]),
  BYTES: () => ['hello', 'wörld', new TextEncoder().encode('bytes'), '', '🙂 emoji', 'x'.repeat(300)],
};

const MODEL_OF: Record<Exclude<DataType, 'BF16'>, string> = {
  BOOL: 'identity_bool', UINT8: 'identity_uint8', UINT16: 'identity_uint16', UINT32: 'identity_uint32', UINT64: 'identity_uint64',
  INT8: 'identity_int8', INT16: 'identity_int16', INT32: 'identity_int32', INT64: 'identity_int64',
  FP16: 'identity_fp16', FP32: 'identity_fp32', FP64: 'identity_fp64', BYTES: 'identity_string',
};

/** Exact comparison: typed arrays by their bytes (so NaN payloads and -0 count), BYTES as text. */
function same(actual: Tensor, datatype: DataType, expected: TensorData): void {
  expect(actual.datatype).toBe(datatype);
  if (datatype === 'BYTES') {
    expect((actual.data as unknown[]).map((e) => bytesElementToString(e as string))).toEqual(
      (expected as Array<string | Uint8Array>).map((e) => bytesElementToString(e)),
    );
    return;
  }
  const a = actual.data as Uint8Array;
  const e = expected as Uint8Array;
  expect(a.constructor.name).toBe(e.constructor.name);
  expect(new Uint8Array(a.buffer, a.byteOffset, a.byteLength)).toEqual(new Uint8Array(e.buffer, e.byteOffset, e.byteLength));
}

function sliceRows(data: TensorData, from: number, to: number, width: number): TensorData {
  return Array.isArray(data) ? data.slice(from * width, to * width) : (data as Uint8Array).slice(from * width, to * width);
}

for (const runtime of ['node', 'web'] as const) {
  describe(`every datatype through identity models, end to end (onnxruntime-${runtime})`, () => {
    let harness: ServerHarness;
    beforeAll(async () => {
      const models = Object.fromEntries(Object.values(MODEL_OF).map((m) => [m, { artifact: m }]));
      harness = await ServerHarness.start(models, { runtime });
    });
    afterAll(async () => {
      await harness?.stop();
    });

    for (const [datatype, model] of Object.entries(MODEL_OF) as Array<[Exclude<DataType, 'BF16'>, string]>) {
      test(`${datatype}: one request, and concurrent requests batched together`, async () => {
        expect((await harness.state(model)).state).toBe('READY');
        const data = ROWS[datatype]();
        const out = await harness.infer(model, { INPUT0: { datatype, shape: [2, 3], data } });
        expect(out.OUTPUT0!.shape).toEqual([2, 3]);
        same(out.OUTPUT0!, datatype, data);

        // Rows 0, 1-2 and 1 as three concurrent requests: the dynamic batcher may join
        // them, and each must get back exactly its own rows.
        const parts = [sliceRows(data, 0, 1, 3), sliceRows(data, 0, 2, 3), sliceRows(data, 1, 2, 3)];
        const shapes = [[1, 3], [2, 3], [1, 3]];
        const results = await Promise.all(parts.map((part, i) => harness.infer(model, { INPUT0: { datatype, shape: shapes[i]!, data: part } })));
        results.forEach((result, i) => {
          expect(result.OUTPUT0!.shape).toEqual(shapes[i]);
          same(result.OUTPUT0!, datatype, parts[i]!);
        });
      });
    }
  });
}
