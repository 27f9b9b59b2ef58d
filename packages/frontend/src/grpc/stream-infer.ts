import type { ServerDuplexStream } from '@grpc/grpc-js';
import { InferenceError, type CallerTrace, type RunningInference } from '@tritium/core';
import { sendTraced } from '../request-tracing.js';
import { grpcTrace } from './grpc-trace.js';
import { isDecoupled } from '../decoupled-model.js';
import { decodeInferRequest, type DecodedInferRequest, type InferRequestMessage } from './infer-request.js';
import type { InferResponseMessage } from './infer-response.js';
import { encodeAnswer, inferOnce } from './model-infer.js';
import type { ServingContext } from './serving-context.js';
import { inferParameter } from './wire-parameters.js';

/** ModelStreamInferResponse: a response, or the error of one request (the stream itself goes on). */
export interface StreamResponseMessage {
  readonly error_message?: string;
  readonly infer_response: InferResponseMessage;
}

/**
 * The most requests one stream holds in flight (read and not yet fully answered). At
 * this many the stream stops reading until one is answered, so that a client that sends
 * without end holds a bounded share of the server's memory; gRPC's flow control then
 * holds the client's further requests back.
 */
export const STREAM_REQUESTS_IN_FLIGHT = 64;

/** Triton's words for a request that comes on an open stream while the server shuts down. */
const SHUTTING_DOWN = 'GRPC server is shutting down and has stopped accepting new requests.';

/**
 * How a request on the stream is answered: a model that answers once gives one message,
 * written in the order the requests came (as Triton does); a decoupled model's responses
 * are written as they come, by `streamed`.
 */
type Answer = { readonly message: Promise<StreamResponseMessage> } | { readonly streamed: Promise<void> };

const FINAL = { triton_final_response: inferParameter(true) };
const NOT_FINAL = { triton_final_response: inferParameter(false) };

/**
 * The ModelStreamInfer RPC: many requests on one stream, each answered by zero or more
 * responses marked with Triton's `triton_final_response`. A request that fails is
 * answered by an error message and the stream stays open; the stream ends once the
 * client has stopped sending and every request is answered. Cancelling the stream
 * cancels every request still in flight.
 */
export function serveInferStream(context: ServingContext, call: ServerDuplexStream<InferRequestMessage, StreamResponseMessage>): void {
  new InferStream(context, call);
}

class InferStream {
  /** The writes of once-answering requests, chained in request order. */
  private inOrder: Promise<void> = Promise.resolve();
  private open = 0;
  private reading = true;
  private ended = false;
  /** Set from a write() that the client's flow control held back until the 'drain' that follows it. */
  private writesHeld = false;
  /** Once-answering requests in flight, to cancel with the stream. */
  private readonly running = new Set<RunningInference>();
  /** Cancels decoupled requests with the stream. */
  private readonly abort = new AbortController();

  constructor(
    private readonly context: ServingContext,
    private readonly call: ServerDuplexStream<InferRequestMessage, StreamResponseMessage>,
  ) {
    call.on('data', (message: InferRequestMessage) => this.take(message));
    call.on('end', () => {
      this.reading = false;
      this.finishIfDone();
    });
    call.on('drain', () => {
      this.writesHeld = false;
      this.pace();
    });
    call.on('cancelled', () => this.cancel());
    call.on('error', () => this.cancel());
  }

  private take(message: InferRequestMessage): void {
    const trace = grpcTrace(this.call.metadata, message);
    this.open++;
    this.pace();
    const answer = this.answer(message, trace);
    const previous = this.inOrder;
    // A decoupled request takes no turn: later answers wait only until it is known to be one.
    const turn = answer.then(async (a) => {
      const reply = 'message' in a ? await a.message : undefined;
      await previous;
      if (reply) this.write(reply, trace);
    });
    this.inOrder = turn;
    void answer
      .then((a) => ('streamed' in a ? a.streamed : turn))
      .finally(() => {
        // Answered, failed, or the stream is gone: the request's trace can be written.
        trace?.end();
        this.open--;
        this.pace();
        this.finishIfDone();
      });
  }

  /** A request's answer; the shared-memory regions it names are held until it is answered. */
  private async answer(message: InferRequestMessage, trace: CallerTrace | undefined): Promise<Answer> {
    const regions = this.context.memory.forRequest();
    let decoded: DecodedInferRequest;
    try {
      if (this.context.closing) throw new InferenceError('UNAVAILABLE', SHUTTING_DOWN);
      decoded = decodeInferRequest(message, regions, trace);
      if (isDecoupled(this.context.server, decoded.model, decoded.request.modelVersion)) {
        return { streamed: this.stream(message, decoded).finally(() => regions.release()) };
      }
    } catch (error) {
      regions.release();
      return { message: Promise.resolve(failure(message, error)) };
    }
    const reply = inferOnce(this.context, decoded, (running) => this.track(running), FINAL).finally(() => regions.release());
    return { message: reply.then((infer_response) => ({ infer_response }), (error: unknown) => failure(message, error)) };
  }

  private track(running: RunningInference): void {
    if (this.ended) return running.cancel();
    this.running.add(running);
    void running.response.finally(() => this.running.delete(running)).catch(() => {});
  }

  /** A decoupled request: each response as it comes, then Triton's empty final response if the client asked for one. */
  private async stream(message: InferRequestMessage, decoded: DecodedInferRequest): Promise<void> {
    const { server } = this.context;
    const { trace } = decoded.request;
    let final = false;
    try {
      for await (const response of server.inferStream(decoded.model, { ...decoded.request, signal: this.abort.signal })) {
        trace?.stamp('INFER_RESPONSE_COMPLETE');
        final = response.final === true;
        this.write({ infer_response: await encodeAnswer(this.context, decoded, response, final ? FINAL : NOT_FINAL) }, trace);
      }
      if (decoded.emptyFinalResponse && !final) this.write({ infer_response: { ...origin(message), parameters: FINAL } }, trace);
    } catch (error) {
      this.write(failure(message, error), trace);
    }
  }

  /** Writes one message of the stream; a traced request's between its send activities. */
  private write(message: StreamResponseMessage, trace: CallerTrace | undefined): void {
    if (this.ended) return;
    let written = false;
    sendTraced(trace, 'GRPC', () => (written = this.call.write(message)));
    if (written || this.writesHeld) return;
    this.writesHeld = true;
    this.pace();
  }

  /** Reads on only while the client takes what is written and fewer than STREAM_REQUESTS_IN_FLIGHT requests are open. */
  private pace(): void {
    const hold = this.writesHeld || this.open >= STREAM_REQUESTS_IN_FLIGHT;
    if (hold === this.call.isPaused()) return;
    if (hold) this.call.pause();
    else this.call.resume();
  }

  private finishIfDone(): void {
    if (this.reading || this.open > 0 || this.ended) return;
    this.ended = true;
    this.call.end();
  }

  private cancel(): void {
    if (this.ended) return;
    this.ended = true;
    for (const running of this.running) running.cancel();
    this.abort.abort();
  }
}

/** What a response names of its request, from the request itself (for answers that no response carries). */
function origin(message: InferRequestMessage) {
  return { id: message.id ?? '', model_name: message.model_name ?? '', model_version: message.model_version ?? '' };
}

/** A request's error, inside the stream: Triton's error_message, with the request's id so the client can tell which failed. */
function failure(message: InferRequestMessage, error: unknown): StreamResponseMessage {
  return { error_message: InferenceError.from(error).message, infer_response: { ...origin(message), parameters: FINAL } };
}
