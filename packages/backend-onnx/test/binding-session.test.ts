import { describe, expect, test } from 'vitest';
import { BindingSession } from '../src/binding-session.js';
import type { TensorPayload } from '../src/onnx-session.js';
import { RuntimeLoader } from '../src/runtime.js';
import { modelArtifact } from './helpers.js';

/** An input per element type, by onnxruntime's type name and the identity model that takes it. */
const INPUTS: Array<[model: string, payload: TensorPayload]> = [
  ['identity_bool', { type: 'bool', data: Uint8Array.from([1, 0, 1, 1]), dims: [2, 2] }],
  ['identity_uint8', { type: 'uint8', data: Uint8Array.from([0, 1, 254, 255]), dims: [2, 2] }],
  ['identity_int8', { type: 'int8', data: Int8Array.from([-128, -1, 0, 127]), dims: [2, 2] }],
  ['identity_uint16', { type: 'uint16', data: Uint16Array.from([0, 1, 65534, 65535]), dims: [2, 2] }],
  ['identity_int16', { type: 'int16', data: Int16Array.from([-32768, -1, 0, 32767]), dims: [2, 2] }],
  ['identity_uint32', { type: 'uint32', data: Uint32Array.from([0, 1, 2 ** 32 - 2, 2 ** 32 - 1]), dims: [2, 2] }],
  ['identity_int32', { type: 'int32', data: Int32Array.from([-(2 ** 31), -1, 0, 2 ** 31 - 1]), dims: [2, 2] }],
  ['identity_uint64', { type: 'uint64', data: BigUint64Array.from([0n, 1n, 2n ** 63n, 2n ** 64n - 1n]), dims: [2, 2] }],
  ['identity_int64', { type: 'int64', data: BigInt64Array.from([-(2n ** 63n), -1n, 2n ** 53n + 1n, 2n ** 63n - 1n]), dims: [2, 2] }],
  ['identity_fp16', { type: 'float16', data: Uint16Array.from([0x3e00, 0xc000, 0x7c00, 0x0001]), dims: [2, 2] }],
  ['identity_fp32', { type: 'float32', data: Float32Array.from([1.5, -0, Infinity, NaN]), dims: [2, 2] }],
  ['identity_fp64', { type: 'float64', data: Float64Array.from([Math.PI, -0, -Infinity, NaN]), dims: [2, 2] }],
  ['identity_string', { type: 'string', data: ['hello', 'wörld', '', '🙂'], dims: [2, 2] }],
];

describe('BindingSession (onnxruntime-node 1.30 binding, called with plain feed objects)', async () => {
  const { ort } = await new RuntimeLoader().loadNative();
  const open = BindingSession.opener(ort);

  // A change in onnxruntime-node's binding shows here first (the inline lane then falls back to the public API).
  test('is available for the onnxruntime-node this package depends on', () => {
    expect(open).toBeTypeOf('function');
  });

  test.each(INPUTS)('%s: the output is the input, element for element', (model, input) => {
    const session = open!(modelArtifact(model), {});
    try {
      const output = session.run({ INPUT0: input }, ['OUTPUT0']).outputs.OUTPUT0!;
      expect([output.type, output.dims]).toEqual([input.type, input.dims]);
      // Typed arrays by their bytes, so NaN and -0 count; strings as they are.
      const bytes = (data: TensorPayload['data']) => (ArrayBuffer.isView(data) ? Array.from(new Uint8Array(data.buffer, data.byteOffset, data.byteLength)) : data);
      expect(bytes(output.data)).toEqual(bytes(input.data));
    } finally {
      session.release();
    }
  });

  test('a feed the binding cannot read fails the run with its reason', () => {
    const session = open!(modelArtifact('identity_fp32'), {});
    try {
      expect(() => session.run({ INPUT0: { type: 'float32', data: Float32Array.from([1, 2, 3]), dims: [2, 2] } }, ['OUTPUT0'])).toThrow(/not enough space/);
    } finally {
      session.release();
    }
  });
});
