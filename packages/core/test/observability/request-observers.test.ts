import { afterEach, describe, expect, it } from 'vitest';
import { isObservingRequests, type RequestStageMessage, type Tensor } from '@tritium/core';
import { RequestObserverRegistration, type RequestObserver } from '../../src/observability/request-observers.js';
import { testConfig, TWO_STEP_ENSEMBLE } from '../helpers/repository.js';
import { useServerFixture } from '../helpers/server-fixture.js';

const fx = useServerFixture();
const row = (value: number): Record<string, Tensor> => ({ INPUT0: { datatype: 'FP32', shape: [1, 4], data: new Float32Array(4).fill(value) } });

/** An observer that follows the requests `follows` picks, and records the stages it hears by request id. */
function recorder(follows: (message: RequestStageMessage) => boolean) {
  const heard: string[] = [];
  const note = (stage: string) => (message: RequestStageMessage) => void heard.push(`${message.request.modelName}/${message.request.id}:${stage}`);
  const observer: RequestObserver = {
    start: (message) => {
      note('start')(message);
      return follows(message);
    },
    queue: note('queue'),
    computeStart: note('computeStart'),
    computeEnd: note('computeEnd'),
    error: note('error'),
    end: note('end'),
  };
  const registration = new RequestObserverRegistration(observer);
  registrations.push(registration);
  registration.set(true);
  return heard;
}
const registrations: RequestObserverRegistration[] = [];
afterEach(() => {
  for (const registration of registrations.splice(0)) registration.set(false);
});

describe('request observers (core tracers decide at the door)', () => {
  it('hear the later stages of only the requests they follow', async () => {
    const server = await fx.start({ m: { config: testConfig({ maxBatchSize: 8 }) } });
    const heard = recorder(({ request }) => request.id === 'kept');
    await server.infer('m', { inputs: row(1), id: 'kept' });
    await server.infer('m', { inputs: row(2), id: 'passed' });
    await expect(server.infer('m', { inputs: { WRONG: row(3).INPUT0! }, id: 'refused' })).rejects.toMatchObject({ code: 'INVALID_ARG' });
    expect(heard).toEqual(['m/kept:start', 'm/kept:queue', 'm/kept:computeStart', 'm/kept:computeEnd', 'm/kept:end', 'm/passed:start', 'm/refused:start']);
  });

  it("leave an ensemble's steps alone when they do not follow the ensemble request", async () => {
    const server = await fx.start({ first: { config: testConfig({ name: 'first' }) }, second: { config: testConfig({ name: 'second' }) }, ens: { config: TWO_STEP_ENSEMBLE } });
    const parents: unknown[] = [];
    const heard = recorder(({ request }) => {
      parents.push(request.parent?.modelName);
      return false;
    });
    await server.infer('ens', { inputs: { A: { datatype: 'FP32', shape: [4], data: new Float32Array(4) } }, id: 'e' });
    // Each step starts naming the ensemble request as its parent, so an observer that declined the ensemble declines its steps.
    expect(heard).toEqual(['ens/e:start', 'first/e:start', 'second/e:start']);
    expect(parents).toEqual([undefined, 'ens', 'ens']);
  });

  it('hear nothing more once unregistered, not even the later stages of a request they followed', async () => {
    const server = await fx.start({ m: { config: testConfig({ maxBatchSize: 8 }) } });
    const heard = recorder(() => true);
    const answer = server.infer('m', { inputs: row(1), id: 'slow', parameters: { delay_ms: 100 } });
    await new Promise((resolve) => setTimeout(resolve, 20));
    registrations.splice(0).forEach((registration) => registration.set(false));
    await answer;
    expect(heard).toEqual(['m/slow:start', 'm/slow:queue', 'm/slow:computeStart']);
  });

  it('count while registered, and only then', () => {
    expect(isObservingRequests()).toBe(false);
    recorder(() => false);
    expect(isObservingRequests()).toBe(true);
    registrations.splice(0).forEach((registration) => registration.set(false));
    expect(isObservingRequests()).toBe(false);
  });
});
