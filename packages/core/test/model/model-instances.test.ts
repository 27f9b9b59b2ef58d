import { describe, expect, it } from 'vitest';
import { InferenceError, parseModelConfig, type Backend } from '@tritium/core';
import type { ModelContext } from '@tritium/core/backend';
import { normalizeModelConfig } from '../../src/config/normalize.js';
import { modelInstances } from '../../src/model/model-instances.js';

/** Far above what these groups ask for. */
const LIMIT = 64;
const contextOf = (groups: string) => ({ name: 'm', config: normalizeModelConfig(parseModelConfig(`name: "m" backend: "b" ${groups}`)) }) as unknown as ModelContext;
const backend = (gpuCount?: () => number): Backend => ({ name: 'b', createModel: () => Promise.reject(new Error('unused')), ...(gpuCount && { gpuCount }) });
const failure = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('did not throw');
};

describe('modelInstances', () => {
  it('makes count instances per CPU group, named <group>_<index> as Triton names them, whatever the count', () => {
    const instances = modelInstances(backend(), contextOf('instance_group { count: 2 kind: KIND_CPU } instance_group { name: "one" kind: KIND_CPU }'), LIMIT);
    expect(instances).toEqual([
      { name: 'm_0_0', kind: 'KIND_CPU' },
      { name: 'm_0_1', kind: 'KIND_CPU' },
      { name: 'one_0', kind: 'KIND_CPU' },
    ]);
  });

  it("puts a KIND_GPU group's instances on each listed GPU, or on every GPU the backend finds", () => {
    const listed = modelInstances(backend(() => 4), contextOf('instance_group { name: "g" count: 2 kind: KIND_GPU gpus: [1, 3] }'), LIMIT);
    expect(listed.map((i) => `${i.name}@${i.deviceId}`)).toEqual(['g_0@1', 'g_1@1', 'g_0@3', 'g_1@3']);
    const every = modelInstances(backend(() => 2), contextOf('instance_group { name: "g" kind: KIND_GPU }'), LIMIT);
    expect(every).toEqual([
      { name: 'g_0', kind: 'KIND_GPU', deviceId: 0 },
      { name: 'g_0', kind: 'KIND_GPU', deviceId: 1 },
    ]);
  });

  it('is UNAVAILABLE for KIND_GPU on a CPU-only backend or one that finds no GPU (with its reason), and INVALID_ARG for a GPU it lacks', () => {
    expect(failure(() => modelInstances(backend(), contextOf('instance_group { name: "g" kind: KIND_GPU }'), LIMIT))).toMatchObject({
      code: 'UNAVAILABLE',
      message: "model 'm': instance group g has kind KIND_GPU, but backend 'b' runs models on the CPU only",
    });
    expect(failure(() => modelInstances(backend(() => 0), contextOf('instance_group { name: "g" kind: KIND_GPU }'), LIMIT))).toMatchObject({
      code: 'UNAVAILABLE',
      message: expect.stringMatching(/backend 'b' finds no GPU/),
    });
    const noCuda = () => {
      throw new InferenceError('UNAVAILABLE', 'this build has no CUDA');
    };
    expect(failure(() => modelInstances(backend(noCuda), contextOf('instance_group { name: "g" kind: KIND_GPU }'), LIMIT))).toMatchObject({
      code: 'UNAVAILABLE',
      message: "model 'm': instance group g has kind KIND_GPU: this build has no CUDA",
    });
    expect(failure(() => modelInstances(backend(() => 2), contextOf('instance_group { name: "g" kind: KIND_GPU gpus: [0, 2] }'), LIMIT))).toMatchObject({
      code: 'INVALID_ARG',
      message: expect.stringMatching(/specifies invalid or unsupported gpu id 2: backend 'b' finds 2 GPU/),
    });
  });

  it('refuses more instances than the limit once a KIND_GPU group without gpus is spread over every GPU', () => {
    expect(failure(() => modelInstances(backend(() => 4), contextOf('instance_group { name: "g" count: 2 kind: KIND_GPU }'), 4))).toMatchObject({
      code: 'INVALID_ARG',
      message: "model 'm': instance group g asks for 8 instance(s), over the limit of 4 instances per model (raise it with the server option maxInstancesPerModel, or tritium serve --max-instances-per-model)",
    });
    expect(modelInstances(backend(() => 2), contextOf('instance_group { name: "g" count: 2 kind: KIND_GPU }'), 4)).toHaveLength(4);
  });
});
