import { afterEach, describe, expect, it } from 'vitest';
import { InferenceServer, type Backend, type Logger } from '@tritium/core';
import type { BackendRequest, ModelContext } from '@tritium/core/backend';
import { TempRepository, testConfig } from '../helpers/repository.js';
import { sleep } from '../helpers/test-backend.js';

/** What the test sets for the models and reads back: readiness, cancellation events, and what `counter` saw. */
interface ContextState {
  ready: boolean;
  cancelEvents: number;
  inFlightSeen?: number[];
  gate?: Promise<void>;
  counterContext?: ModelContext;
}

/**
 * A backend whose models use what core hands them: `caller` runs `callee` through the
 * server (as a Python model's BLS would), `waiter` waits for its request's cancellation
 * event, `counter` notes how many requests its context says are in flight and waits for
 * `state.gate`, any other logs once per execute, and every instance answers isReady from `ready`.
 */
function contextBackend(state: ContextState): Backend {
  return {
    name: 'ctx',
    defaultModelFilename: 'model.test',
    async createModel(context: ModelContext) {
      if (context.name === 'counter') state.counterContext = context;
      return {
        async createInstance() {
          return {
            isReady: async () => state.ready,
            async execute(requests: readonly BackendRequest[]) {
              const request = requests[0]!;
              if (context.name === 'caller') {
                const inner = await context.server.infer('callee', { inputs: { INPUT0: request.inputs.INPUT0! } });
                return [{ OUTPUT0: inner.outputs.OUTPUT0! }];
              }
              if (context.name === 'counter') {
                state.inFlightSeen!.push(context.requestsInFlight());
                await state.gate;
                return [{ OUTPUT0: request.inputs.INPUT0! }];
              }
              if (context.name === 'waiter') {
                await new Promise<void>((resolve) => request.onCancel(() => { state.cancelEvents++; resolve(); }));
                return [new Error('cancelled')];
              }
              context.logger.info(`${context.name} ran ${request.id} with priority ${request.priority}`);
              return [{ OUTPUT0: request.inputs.INPUT0! }];
            },
          };
        },
      };
    },
  };
}

const config = (name: string) => testConfig({ name }).replace('backend: "test"', 'backend: "ctx"');
const input = { INPUT0: { datatype: 'FP32' as const, shape: [4], data: new Float32Array([1, 2, 3, 4]) } };

describe('what core hands a backend', () => {
  let repo: TempRepository | undefined;
  let server: InferenceServer | undefined;
  afterEach(async () => {
    await server?.stop();
    await repo?.remove();
  });

  async function start(state: ContextState, logger?: Logger) {
    repo = await TempRepository.create({ caller: { config: config('caller') }, callee: { config: config('callee') }, waiter: { config: config('waiter') }, counter: { config: config('counter') } });
    server = await InferenceServer.start({ modelRepository: repo.path, backends: [contextBackend(state)], logger });
    return server;
  }

  it('a model calls another model through the server in its context, and logs through the server logger', async () => {
    const lines: string[] = [];
    const logger: Logger = { error: () => {}, warn: () => {}, info: (m) => lines.push(m), verbose: () => {} };
    const s = await start({ ready: true, cancelEvents: 0 }, logger);
    const response = await s.infer('caller', { inputs: input });
    expect(Array.from(response.outputs.OUTPUT0!.data as Float32Array)).toEqual([1, 2, 3, 4]);
    expect(lines).toEqual([expect.stringMatching(/^callee ran .* with priority 0$/)]);
  });

  it('cancellation reaches a running backend as an event', async () => {
    const state = { ready: true, cancelEvents: 0 };
    const s = await start(state);
    const controller = new AbortController();
    const pending = s.infer('waiter', { inputs: input, signal: controller.signal });
    await sleep(20);
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: 'CANCELLED' });
    await sleep(5);
    expect(state.cancelEvents).toBe(1);
  });

  it('a model\'s context counts its requests in flight, executing and waiting for its one instance, and not answered ones', async () => {
    let open!: () => void;
    const state: ContextState = { ready: true, cancelEvents: 0, inFlightSeen: [], gate: new Promise<void>((resolve) => (open = resolve)) };
    const s = await start(state);
    const answers = Promise.all([1, 2, 3].map(() => s.infer('counter', { inputs: input })));
    try {
      await sleep(20);
      // The first request found the instance free and runs alone; the two after it wait.
      expect([state.inFlightSeen, state.counterContext!.requestsInFlight()]).toEqual([[1], 3]);
    } finally {
      open();
    }
    await answers;
    // Each later execution saw itself and those still waiting; none is left once all are answered.
    expect([state.inFlightSeen, state.counterContext!.requestsInFlight()]).toEqual([[1, 2, 1], 0]);
  });

  it('a model is ready only while its instances say they are', async () => {
    const state = { ready: true, cancelEvents: 0 };
    const s = await start(state);
    expect(await s.isModelReady('callee')).toBe(true);
    state.ready = false;
    expect(await s.isModelReady('callee')).toBe(false);
  });
});
