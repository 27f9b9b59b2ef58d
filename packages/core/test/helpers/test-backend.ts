import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  InferenceError,
  type Backend,
  type ModelConfig,
  type Tensor,
} from '@tritium/core';
import type { BackendInstance, BackendRequest, InstanceHealth } from '@tritium/core/backend';

/**
 * An in-test backend. The model's `behavior` parameter picks what it computes:
 * - identity: OUTPUTi = INPUTi (by position)
 * - add: OUTPUT0 = INPUT0 + INPUT1 (FP32 or INT32)
 * - repeat (decoupled): sends INPUT0 back `count` times (request parameter), then the final flag alone
 *   (or, with request parameter `final_with_last`, the flag with the last response)
 * - accumulate: OUTPUT0 = INPUT0 + STATE_IN and STATE_OUT = the same (an implicit-state sequence model, FP32)
 * Request parameters: `delay_ms` waits before answering; `hang` never answers; `fail` makes that request fail.
 * Model parameter `delay_ms` delays every execution. The model file (`model.test`)
 * may hold JSON: `{ "fail": "reason" }` fails loading, `{ "hang": true }` never finishes
 * loading, `{ "loadDelayMs": 50 }` takes that long to load, `{ "recoveringAtCreate": "reason" }` has each
 * instance report itself recovering while it is created, `{ "writeCache": true }` writes a file beside the model while loading (as
 * backends that cache compiled models do), `{ "input": [...], "output": [...] }` serves
 * auto-complete.
 */
export interface TestBackendProbe {
  /** Executions running now and the most seen at once. */
  running: number;
  maxRunning: number;
  executions: number;
  instancesCreated: string[];
  /** Each instance's health reporter, by instance name, so a test can report for it. */
  health: Record<string, InstanceHealth>;
  /** The instance each execution ran on, in order. */
  ranOn: string[];
  /** The requests of each execution, in order, as the backend saw them (control and state inputs included). */
  batches: BackendRequest[][];
  instancesFinalized: string[];
  modelsFinalized: number;
  cancelledSeen: number;
  /** Instances finalized while one of their executions was still running: must stay 0. */
  finalizedWhileRunning: number;
  /** In order: 'execute ended', 'instance <name> finalized', 'model finalized', 'backend finalized'. */
  events: string[];
}

export function testBackend(probe: TestBackendProbe = newProbe()): Backend & { probe: TestBackendProbe } {
  return {
    name: 'test',
    defaultModelFilename: 'model.test',
    probe,
    async finalize() {
      probe.events.push('backend finalized');
    },
    async autoCompleteConfig(config: ModelConfig, files) {
      const spec = await readModelFile(files.modelPath);
      return { ...config, input: config.input ?? spec.input, output: config.output ?? spec.output };
    },
    async createModel(context) {
      const spec = await readModelFile(context.modelPath);
      if (typeof spec.fail === 'string') throw new InferenceError('INVALID_ARG', `test model file says: ${spec.fail}`);
      if (spec.hang) await new Promise(() => {});
      if (spec.loadDelayMs) await sleep(spec.loadDelayMs);
      if (spec.writeCache) await writeFile(join(context.versionDirectory, 'compiled.cache'), String(Math.random()));
      const params = context.config.parameters ?? {};
      const behavior = params.behavior?.string_value ?? 'identity';
      const modelDelay = Number(params.delay_ms?.string_value ?? 0);
      const outputs = (context.config.output ?? []).map((o) => o.name!);
      const inputs = (context.config.input ?? []).map((i) => i.name!);
      return {
        description: `test backend (${behavior}), version ${context.version}`,
        async createInstance(instance) {
          probe.instancesCreated.push(instance.name);
          probe.health[instance.name] = instance.health;
          if (typeof spec.recoveringAtCreate === 'string') instance.health.recovering(spec.recoveringAtCreate);
          let running = 0;
          const created: BackendInstance = {
            async execute(requests) {
              probe.executions++;
              probe.ranOn.push(instance.name);
              probe.batches.push([...requests]);
              probe.running++;
              running++;
              probe.maxRunning = Math.max(probe.maxRunning, probe.running);
              try {
                const delay = modelDelay + Number(requests[0]?.parameters.delay_ms ?? 0);
                if (delay > 0) await sleep(delay);
                if (requests.some((r) => r.parameters.hang)) await new Promise(() => {});
                if (requests.some((r) => r.isCancelled)) probe.cancelledSeen++;
                if (behavior === 'repeat') {
                  for (const request of requests) void repeat(request);
                  return;
                }
                return requests.map((request) => {
                  if (request.parameters.fail) return new Error(`asked to fail: ${String(request.parameters.fail)}`);
                  return compute(behavior, request, inputs, outputs);
                });
              } finally {
                probe.running--;
                running--;
                probe.events.push('execute ended');
              }
            },
            async finalize() {
              if (running > 0) probe.finalizedWhileRunning++;
              probe.instancesFinalized.push(instance.name);
              probe.events.push(`instance ${instance.name} finalized`);
            },
          };
          return created;
        },
        async finalize() {
          probe.modelsFinalized++;
          probe.events.push('model finalized');
        },
      };
    },
  };
}

export function newProbe(): TestBackendProbe {
  return {
    running: 0,
    maxRunning: 0,
    executions: 0,
    instancesCreated: [],
    health: {},
    ranOn: [],
    batches: [],
    instancesFinalized: [],
    modelsFinalized: 0,
    cancelledSeen: 0,
    finalizedWhileRunning: 0,
    events: [],
  };
}

function compute(behavior: string, request: BackendRequest, inputs: string[], outputs: string[]): Record<string, Tensor> {
  if (behavior === 'add') {
    const a = request.inputs[inputs[0]!]!;
    const b = request.inputs[inputs[1]!]!;
    const x = a.data as Float32Array;
    const y = b.data as Float32Array;
    const sum = new (x.constructor as Float32ArrayConstructor)(x.length);
    for (let i = 0; i < x.length; i++) sum[i] = x[i]! + y[i]!;
    return { [outputs[0]!]: { datatype: a.datatype, shape: a.shape, data: sum } };
  }
  if (behavior === 'accumulate') {
    const x = request.inputs[inputs[0]!]!.data as Float32Array;
    const state = request.inputs.STATE_IN!.data as Float32Array;
    const sum = x.map((value, i) => value + state[i]!);
    const tensor: Tensor = { datatype: 'FP32', shape: [...request.inputs.STATE_IN!.shape], data: sum };
    return { [outputs[0]!]: tensor, STATE_OUT: tensor };
  }
  const result: Record<string, Tensor> = {};
  outputs.forEach((name, i) => {
    const input = request.inputs[inputs[i]!];
    if (input) result[name] = input;
  });
  return result;
}

async function repeat(request: BackendRequest): Promise<void> {
  const count = Number(request.parameters.count ?? 1);
  const input = Object.values(request.inputs)[0]!;
  for (let i = 0; i < count; i++) {
    await sleep(Number(request.parameters.interval_ms ?? 1));
    if (request.isCancelled) return;
    request.response.send({ OUT: input }, { final: i === count - 1 && request.parameters.final_with_last === true });
  }
  request.response.close();
}

async function readModelFile(path: string): Promise<Record<string, any>> {
  const text = await readFile(path, 'utf8').catch(() => {
    throw new InferenceError('NOT_FOUND', `no model file at '${path}'`);
  });
  return text.trim() ? JSON.parse(text) : {};
}

/**
 * Waits until `ms` have passed by performance.now(): a timer alone can fire early by that
 * clock, as it counts whole milliseconds from the event loop's cached time (2.2 ms for a 3 ms timer, once, in CI).
 */
export async function sleep(ms: number): Promise<void> {
  const until = performance.now() + ms;
  for (let left = ms; left > 0; left = until - performance.now()) await new Promise((resolve) => setTimeout(resolve, left));
}
