import type { ResponseSender } from '../contract/backend.js';
import { InferenceError } from '../errors.js';
import type { Tensor } from '../tensor/tensor.js';
import type { ModelOutputs } from './model-outputs.js';

/** Where a request's responses go: a promise for `infer()`, an async queue for `inferStream()`. */
export interface ResponseSink {
  /** `final`: the model sent this response as its last; end() follows at once. */
  response(outputs: Record<string, Tensor>, final: boolean): void;
  end(): void;
  error(error: InferenceError): void;
}

/** The request a channel answers for. */
export interface ResponseOwner {
  describe(): string;
  responseEnded(error?: InferenceError): void;
}

/**
 * A request's response sender. Checks each response against the model's outputs,
 * keeps only the requested outputs, refuses a response that lacks one, and ignores
 * whatever a backend sends after the stream ended (for example after the caller
 * cancelled: the caller has already been told).
 */
export class ResponseChannel implements ResponseSender {
  private ended = false;

  constructor(
    private readonly sink: ResponseSink,
    private readonly requestedOutputs: readonly string[],
    private readonly owner: ResponseOwner,
    private readonly modelOutputs: ModelOutputs,
  ) {}

  get isEnded(): boolean {
    return this.ended;
  }

  /** Returns whether the response reached the caller (false when it failed the request or came too late). */
  send(outputs: Readonly<Record<string, Tensor>>, options?: { final?: boolean }): boolean {
    if (this.ended) return false;
    try {
      this.modelOutputs.check(outputs);
    } catch (error) {
      this.fail(error);
      return false;
    }
    const selected: Record<string, Tensor> = {};
    for (const name of this.requestedOutputs) {
      const tensor = outputs[name];
      if (tensor === undefined) {
        this.fail(new InferenceError('INTERNAL', `${this.owner.describe()}: backend produced no output '${name}'`));
        return false;
      }
      selected[name] = tensor;
    }
    this.sink.response(selected, options?.final === true);
    if (options?.final) this.close();
    return true;
  }

  close(): void {
    if (this.ended) return;
    this.ended = true;
    this.sink.end();
    this.owner.responseEnded();
  }

  fail(error: unknown): void {
    if (this.ended) return;
    this.ended = true;
    const failure = InferenceError.from(error, 'INTERNAL', this.owner.describe());
    this.sink.error(failure);
    this.owner.responseEnded(failure);
  }
}
