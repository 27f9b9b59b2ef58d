import { describe, expect, it } from 'vitest';
import type { InstanceContext } from '@tritium/core/backend';
import { cudaDeviceCount, deviceOf } from '../src/devices.js';
import type { TorchAddon } from '../src/native.js';

const health = { recovering() {}, restored() {}, failed() {} };
const instance = (kind: string, deviceId?: number): InstanceContext => ({ name: 'm_0', kind, deviceId, health });
const addonWith = (gpus: number) => ({ cudaDeviceCount: () => gpus, torchVersion: '2.13.0+cpu' }) as unknown as TorchAddon;

describe('instance devices', () => {
  it('runs CPU, AUTO and MODEL instances on the CPU', () => {
    for (const kind of ['KIND_CPU', 'KIND_AUTO', 'KIND_MODEL']) expect(deviceOf(instance(kind))).toBe('cpu');
  });

  it('puts a KIND_GPU instance on its CUDA device', () => {
    expect(deviceOf(instance('KIND_GPU', 1))).toBe('cuda:1');
  });

  it("counts libtorch's CUDA devices, and without any is UNAVAILABLE saying why", () => {
    expect(cudaDeviceCount(addonWith(2))).toBe(2);
    expect(() => cudaDeviceCount(addonWith(0))).toThrowError(expect.objectContaining({ code: 'UNAVAILABLE', message: expect.stringMatching(/KIND_GPU needs CUDA.*torch 2\.13\.0\+cpu/) }));
  });
});
