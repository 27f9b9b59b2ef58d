import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import type { InferenceServer } from '@tritium/core';
import { newProbe, sleep } from '../helpers/test-backend.js';
import { testConfig } from '../helpers/repository.js';
import { rejection, useServerFixture } from '../helpers/server-fixture.js';

// Instances that report their own health (InstanceHealth), seen through the server.
// Instances are named as Triton names them, <group>_<index>: m_0_0, and m_0_1 for a second.
const fx = useServerFixture();

const input = { INPUT0: { datatype: 'FP32' as const, shape: [4], data: new Float32Array(4) } };

/** Whether a promise has settled yet (it is left to settle on its own). */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true), () => (done = true));
  await sleep(0);
  return done;
}

async function serve(count: number, options: { modelFile?: string; exitTimeoutMs?: number } = {}) {
  const probe = newProbe();
  const model = { config: testConfig({ count }), versions: { 1: options.modelFile ?? '' } };
  const server = await fx.start({ m: model }, { modelControlMode: 'explicit', startupModels: ['m'], exitTimeoutMs: options.exitTimeoutMs ?? 30_000 }, probe);
  const infer = (delayMs = 0) => server.infer('m', { inputs: input, parameters: delayMs ? { delay_ms: delayMs } : {} });
  return { server, probe, infer };
}

describe('a recovering instance', () => {
  it('gets no work while the other instance serves, and takes work again once restored', async () => {
    const { probe, infer } = await serve(2);
    probe.health.m_0_1!.recovering('worker died');
    await Promise.all(Array.from({ length: 6 }, () => infer(5)));
    expect(probe.ranOn).toEqual(Array(6).fill('m_0_0'));
    probe.health.m_0_1!.restored();
    probe.ranOn.length = 0;
    await Promise.all(Array.from({ length: 6 }, () => infer(5)));
    expect(new Set(probe.ranOn)).toEqual(new Set(['m_0_0', 'm_0_1']));
  });

  it('holds requests, without failing them, while the only instance recovers, and runs them once restored', async () => {
    const { probe, infer } = await serve(1);
    probe.health.m_0_0!.recovering('worker died');
    const held = [infer(), infer()];
    await sleep(30);
    expect(await settled(Promise.race(held))).toBe(false);
    expect(probe.executions).toBe(0);
    probe.health.m_0_0!.restored();
    await expect(Promise.all(held)).resolves.toHaveLength(2);
    expect(probe.ranOn).toEqual(['m_0_0', 'm_0_0']);
  });

  it('finishes the request it was running when it reported recovering, then gets nothing until restored', async () => {
    const { probe, infer } = await serve(1);
    const running = infer(40);
    await sleep(5);
    probe.health.m_0_0!.recovering('worker died');
    const next = infer();
    await expect(running).resolves.toBeTruthy();
    await sleep(20);
    expect(await settled(next)).toBe(false);
    expect(probe.executions).toBe(1);
    probe.health.m_0_0!.restored();
    await expect(next).resolves.toBeTruthy();
    expect(probe.executions).toBe(2);
  });

  it('is kept out when it reports recovering while being created, until it is restored', async () => {
    const { server, probe, infer } = await serve(1, { modelFile: '{"recoveringAtCreate": "warming up"}' });
    expect(await server.isModelReady('m')).toBe(true);
    const held = infer();
    await sleep(30);
    expect(await settled(held)).toBe(false);
    expect(probe.executions).toBe(0);
    probe.health.m_0_0!.restored();
    await expect(held).resolves.toBeTruthy();
  });
});

describe('every instance failed for good', () => {
  it('fails waiting requests at once with UNAVAILABLE naming the model and reason, and later ones the same way', async () => {
    const { probe, infer } = await serve(2);
    probe.health.m_0_1!.failed('device lost');
    probe.health.m_0_0!.recovering('worker died');
    const waiting = [rejection(infer()), rejection(infer())];
    await sleep(10);
    const failedAt = performance.now();
    probe.health.m_0_0!.failed('worker keeps crashing');
    for (const error of await Promise.all(waiting)) {
      expect(error.code).toBe('UNAVAILABLE');
      expect(error.message).toMatch(/^model 'm' version 1 request '.*': no instance of the model can run: worker keeps crashing; device lost$/);
    }
    expect(performance.now() - failedAt).toBeLessThan(50);
    const later = await rejection(infer());
    expect(later.code).toBe('UNAVAILABLE');
    expect(later.message).toMatch(/model 'm'.*worker keeps crashing; device lost/);
    expect(probe.executions).toBe(0);
  });
});

describe('unloading and stopping with a recovering instance', () => {
  it('unload drains the queue on the healthy instance and finalizes both', async () => {
    const { server, probe, infer } = await serve(2);
    probe.health.m_0_1!.recovering('worker died');
    const requests = Array.from({ length: 4 }, () => infer(5));
    await server.unloadModel('m');
    await expect(Promise.all(requests)).resolves.toHaveLength(4);
    expect(probe.ranOn).toEqual(Array(4).fill('m_0_0'));
    expect(probe.instancesFinalized.sort()).toEqual(['m_0_0', 'm_0_1']);
    expect(probe.modelsFinalized).toBe(1);
  });

  it.each([
    ['unloadModel()', (server: InferenceServer) => server.unloadModel('m'), ['instance m_0_0 finalized', 'model finalized']],
    ['stop()', (server: InferenceServer) => server.stop(), ['instance m_0_0 finalized', 'model finalized', 'backend finalized']],
  ])('%s fails what waits on the only, recovering, instance at the exit timeout and finalizes it', async (_, end, events) => {
    const { server, probe, infer } = await serve(1, { exitTimeoutMs: 50 });
    probe.health.m_0_0!.recovering('worker died');
    const waiting = rejection(infer());
    const started = performance.now();
    await end(server);
    expect(performance.now() - started).toBeLessThan(1000);
    expect((await waiting).code).toBe('UNAVAILABLE');
    expect(probe.events).toEqual(events);
  });
});
