import { InferenceServer, type InferRequest, type Logger } from '@tritium/core';
import { modelDescription, NO_CLIENT_TIME, totalStatistics, type ClientTimes, type ModelDescription, type PerfClient, type RequestInputs, type SequenceStep } from './perf-client.js';

/** Requests straight to an InferenceServer in this process: no encoding, so no client send or receive time. */
export class InProcessClient implements PerfClient<{ model: string; request: InferRequest }> {
  readonly kind = 'Tritium in-process';

  /** A client of a server already started (a benchmark's, with a backend of its own); close() stops it. */
  constructor(
    private readonly server: InferenceServer,
    /** Each request through inferStream(), complete when its stream ends. */
    private readonly streaming = false,
  ) {}

  /** Starts a server of the repository, loading each official backend its models name; its warnings and errors go to `err`, its information lines nowhere (they would break into the report). */
  static async start(modelRepository: string, streaming: boolean, err: { write(text: string): unknown }): Promise<InProcessClient> {
    return new InProcessClient(await InferenceServer.start({ modelRepository, logger: problemsLogger(err) }), streaming);
  }

  async describe(model: string, version?: string): Promise<ModelDescription> {
    const v = version === undefined ? undefined : Number(version);
    const [metadata, config] = await Promise.all([this.server.modelMetadata(model, v), this.server.modelConfig(model, v)]);
    return modelDescription(metadata.inputs, config.max_batch_size, {
      sequence: config.sequence_batching !== undefined,
      decoupled: config.model_transaction_policy.decoupled ?? false,
    });
  }

  prepare(model: string, version: string | undefined, inputs: RequestInputs) {
    return { model, request: { inputs, ...(version === undefined ? {} : { modelVersion: Number(version) }) } };
  }

  async infer({ model, request }: { model: string; request: InferRequest }, sequence?: SequenceStep): Promise<ClientTimes> {
    const sent = sequence ? { ...request, sequence } : request;
    if (this.streaming) for await (const _ of this.server.inferStream(model, sent));
    else await this.server.infer(model, sent);
    return NO_CLIENT_TIME;
  }

  async statistics(model: string, version?: string) {
    return totalStatistics(this.server.statistics(model, version === undefined ? undefined : Number(version)).model_stats);
  }

  close(): Promise<void> {
    return this.server.stop();
  }
}

/** A measuring command's server logger: warnings and errors to `err`, information lines nowhere (they would break into the report). */
export function problemsLogger(err: { write(text: string): unknown }): Logger {
  const line = (message: string) => err.write(`${message}\n`);
  return { error: line, warn: line, info: () => {}, verbose: () => {} };
}
