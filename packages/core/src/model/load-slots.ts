import type { ModelServer } from '../contract/model-server.js';

/**
 * At most `count` loads at once (Triton's --model-load-thread-count): a model's
 * auto-complete and each version's load take a slot, so a Python stub's start time
 * begins when its turn comes, not while it waits behind forty others.
 */
export class LoadSlots {
  private free: number;
  private readonly waiting: Array<() => void> = [];

  constructor(count: number) {
    this.free = Math.max(1, count);
  }

  /** Runs `task` once a slot is free and frees it after. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await task();
    } finally {
      this.release();
    }
  }

  /** A slot for one version's load that the model may lend back while it loads another model (see LoadTurn). */
  turn(): LoadTurn {
    return new LoadTurn(this);
  }

  acquire(): Promise<void> {
    if (this.free > 0) {
      this.free--;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free++;
  }
}

/**
 * One version's load and its slot. A model that loads or unloads another model while
 * it initializes (a BLS model) lends its slot while it waits for that: held, the slot
 * could be the one the other load waits for, and with one slot the two would wait forever.
 */
export class LoadTurn {
  private state: 'waiting' | 'held' | 'lent' | 'done' = 'waiting';
  /** Loads and unloads the model is waiting for now. */
  private lenders = 0;

  constructor(private readonly slots: LoadSlots) {}

  /** Runs the version's load in its slot. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    await this.slots.acquire();
    this.state = 'held';
    try {
      return await task();
    } finally {
      if (this.state === 'held') this.slots.release();
      this.state = 'done';
    }
  }

  /** Runs `task` (another model's load or unload) with the slot given back meanwhile, and takes a slot again before the model goes on. */
  async lend<T>(task: () => Promise<T>): Promise<T> {
    if (this.state !== 'held' && this.state !== 'lent') return task();
    this.lenders++;
    if (this.state === 'held') {
      this.state = 'lent';
      this.slots.release();
    }
    try {
      return await task();
    } finally {
      if (--this.lenders === 0) await this.retake();
    }
  }

  private async retake(): Promise<void> {
    await this.slots.acquire();
    // The load may have ended, or lent the slot again, while this waited.
    if (this.state === 'lent' && this.lenders === 0) this.state = 'held';
    else this.slots.release();
  }
}

/** The server as a loading version sees it: its loads and unloads of other models lend the version's slot. */
export function lendingServer(server: ModelServer, turn: LoadTurn): ModelServer {
  return {
    infer: (name, request) => server.infer(name, request),
    startInference: (name, request) => server.startInference(name, request),
    inferStream: (name, request) => server.inferStream(name, request),
    isModelReady: (name, version) => server.isModelReady(name, version),
    modelConfig: (name, version) => server.modelConfig(name, version),
    loadModel: (name, options) => turn.lend(() => server.loadModel(name, options)),
    unloadModel: (name, options) => turn.lend(() => server.unloadModel(name, options)),
  };
}
