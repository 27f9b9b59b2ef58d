import type { InferResponse } from '../contract/inference.js';
import { InferenceError } from '../errors.js';
import type { Tensor } from '../tensor/tensor.js';
import type { ResponseSink } from './response-channel.js';

interface ResponseOrigin {
  readonly id: string;
  readonly modelName: string;
  readonly modelVersion: number;
}

/** Settles `infer()`'s promise with the one response of a request. */
export class PromiseSink implements ResponseSink {
  private outputs: Record<string, Tensor> | undefined;

  constructor(
    private readonly origin: ResponseOrigin,
    private readonly resolve: (response: InferResponse) => void,
    private readonly reject: (error: InferenceError) => void,
  ) {}

  response(outputs: Record<string, Tensor>): void {
    this.outputs = outputs;
  }

  end(): void {
    const { id, modelName, modelVersion } = this.origin;
    if (this.outputs) this.resolve({ id, modelName, modelVersion, outputs: this.outputs });
    else this.reject(new InferenceError('INTERNAL', `model '${modelName}' request '${id}': completed without a response`));
  }

  error(error: InferenceError): void {
    this.reject(error);
  }
}

/** Feeds `inferStream()`'s async iterator: zero or more responses, then the end or an error. */
export class StreamSink implements ResponseSink, AsyncIterable<InferResponse> {
  private readonly buffered: InferResponse[] = [];
  private finished = false;
  private failure: InferenceError | undefined;
  private wake: (() => void) | undefined;

  constructor(private readonly origin: ResponseOrigin) {}

  response(outputs: Record<string, Tensor>, final: boolean): void {
    const { id, modelName, modelVersion } = this.origin;
    this.buffered.push({ id, modelName, modelVersion, outputs, final });
    this.notify();
  }

  end(): void {
    this.finished = true;
    this.notify();
  }

  error(error: InferenceError): void {
    this.failure = error;
    this.finished = true;
    this.notify();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<InferResponse> {
    for (;;) {
      const next = this.buffered.shift();
      if (next) {
        yield next;
        continue;
      }
      if (this.failure) throw this.failure;
      if (this.finished) return;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
