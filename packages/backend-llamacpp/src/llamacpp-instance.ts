import type { BackendInstance, BackendRequest } from '@tritium/core/backend';
import type { LlamaContext, LlamaModel } from 'node-llama-cpp';
import type { EngineSettings } from './engine-settings.js';
import { generate, type GenerationEngine } from './generation.js';
import { importNodeLlamaCpp } from './llama-runtime.js';
import type { GenerationMetrics } from './generation-metrics.js';
import { SequencePool } from './sequence-pool.js';

/**
 * One llama.cpp context with `parallel` sequences. execute starts each request's
 * generation on a free sequence and returns while one is still free, so the scheduler
 * hands the next requests over at once and they join the running batch (the model is
 * decoupled: it answers through the senders).
 */
export class LlamacppInstance implements BackendInstance {
  private readonly running = new Set<Promise<void>>();

  private constructor(
    private readonly context: LlamaContext,
    private readonly engine: GenerationEngine,
  ) {}

  static async create(model: LlamaModel, settings: EngineSettings, metrics: GenerationMetrics): Promise<LlamacppInstance> {
    const { TokenBias } = await importNodeLlamaCpp();
    const context = await model.createContext({
      contextSize: settings.contextSize,
      sequences: settings.parallel,
      batchSize: settings.batchSize,
      // 0: node-llama-cpp's default, the cores useful for math.
      ...(settings.threads > 0 && { threads: settings.threads }),
    });
    const eos = [model.tokens.eos, model.tokens.eot].filter((token) => token !== null);
    const engine: GenerationEngine = {
      model,
      sequences: new SequencePool(context),
      contextSize: settings.contextSize,
      metrics,
      eosBan: TokenBias.for(model).set(eos, 'never'),
      noBias: TokenBias.for(model),
    };
    return new LlamacppInstance(context, engine);
  }

  /**
   * While every sequence is busy, execute waits, and the instance with it: the scheduler
   * then gives requests to another instance or keeps them in its queue (where a cancelled
   * one is dropped, and the server's queue statistics count the wait) rather than piling
   * them up here.
   */
  async execute(requests: readonly BackendRequest[]): Promise<void> {
    for (const request of requests) {
      await this.engine.sequences.untilFree();
      const generation = generate(request, this.engine);
      this.running.add(generation);
      void generation.finally(() => this.running.delete(generation));
    }
    await this.engine.sequences.untilFree();
  }

  /** Waits for the generations under way (each ends at its max_tokens or when cancelled), then frees the context. */
  async finalize(): Promise<void> {
    this.engine.sequences.close();
    await Promise.all(this.running);
    await this.context.dispose();
  }
}
