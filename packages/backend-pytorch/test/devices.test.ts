import { describe, expect, it } from 'vitest';
import type { InstanceContext } from '@tritium/core';
import { deviceOf } from '../src/devices.js';
import type { TorchAddon } from '../src/native.js';

const health = { recovering() {}, restored() {}, failed() {} };
const instance = (kind: string, deviceId?: number): InstanceContext => ({ name: 'm_0', kind, deviceId, health });
const addonWith = (gpus: number) => ({ cudaDeviceCount: () => gpus, torchVersion: '2.13.0+cpu' }) as unknown as TorchAddon;

describe('instance devices', () => {
  it('runs CPU, AUTO and MODEL instances on the CPU', () => {
    for (const kind of ['KIND_CPU', 'KIND_AUTO', 'KIND_MODEL']) expect(deviceOf('m', instance(kind), addonWith(0))).toBe('cpu');
  });

  it('puts a KIND_GPU instance on its CUDA device when libtorch sees it', () => {
    expect(deviceOf('m', instance('KIND_GPU', 1), addonWith(2))).toBe('cuda:1');
  });

  it('makes KIND_GPU UNAVAILABLE, saying why, without CUDA or past the last GPU', () => {
    expect(() => deviceOf('m', instance('KIND_GPU', 0), addonWith(0))).toThrow(/KIND_GPU needs CUDA.*torch 2\.13\.0\+cpu/);
    expect(() => deviceOf('m', instance('KIND_GPU', 3), addonWith(2))).toThrowError(expect.objectContaining({ code: 'UNAVAILABLE', message: expect.stringMatching(/GPU 3 does not exist/) }));
  });
});
