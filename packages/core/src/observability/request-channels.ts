import { channel } from 'node:diagnostics_channel';
import type { InferenceError, InferenceErrorCode } from '../errors.js';
import type { CallerTrace } from './caller-trace.js';
import type { Tensor } from '../tensor/tensor.js';

/**
 * Tritium's request lifecycle on `node:diagnostics_channel`, named as undici names its
 * own (`undici:request:create`): an application's APM subscribes by name, with no server
 * option. Channels are global by name, so every copy of core (ESM and CJS) publishes to
 * the same ones. Publishers check first whether anyone hears a stage (request-publishing.ts):
 * with no subscriber and no core observer following the request, no message is built.
 */
export const REQUEST_CHANNELS = {
  /** Triton's REQUEST_START: the server took the request (or refused it at the door). */
  start: 'tritium:request:start',
  /** QUEUE_START: handed to its model's scheduler (not for an answer from the response cache). */
  queue: 'tritium:request:queue',
  /** COMPUTE_START: a backend instance began executing the batch the request is in. */
  computeStart: 'tritium:request:compute:start',
  /**
   * COMPUTE_INPUT_END: the execution's inputs were ready for the framework, as its backend
   * reported (ExecutionReport.inputsReady); published when the execution returns, just
   * before compute:end, and only for a backend that reports it.
   */
  computeInputEnd: 'tritium:request:compute:input:end',
  /** COMPUTE_OUTPUT_START: its outputs began to come back (ExecutionReport.outputsStarted); published as compute:input:end is. */
  computeOutputStart: 'tritium:request:compute:output:start',
  /** COMPUTE_END: that execution returned. */
  computeEnd: 'tritium:request:compute:end',
  /** The request failed; published just before its end. */
  error: 'tritium:request:error',
  /** REQUEST_END: the last response or the error went out. */
  end: 'tritium:request:end',
} as const;

/**
 * Who a request is, the same object in every message of one request, so a subscriber can
 * keep its own state for the request in a WeakMap keyed by it. Times are `performance.now()`
 * milliseconds (add `performance.timeOrigin` for epoch milliseconds).
 */
export interface RequestView {
  /** Numbers the requests this copy of core reported. */
  readonly serial: number;
  /**
   * The server that took the request (an InferenceServer), so that a subscriber can tell
   * the servers of one process apart; undefined for a request whose start it did not hear.
   */
  readonly server: object | undefined;
  /**
   * The request this one was made for (Triton's trace `parent_id`): the ensemble request
   * it is a step of, or the request whose model made it as a BLS call (startChildRequest).
   */
  readonly parent: RequestView | undefined;
  /** The caller's request id ('' when none; an ensemble's steps carry the ensemble's). */
  readonly id: string;
  readonly modelName: string;
  /** Undefined only for a request refused before a version was chosen (no such model). */
  readonly modelVersion: number | undefined;
  /** 0 for a request refused before its inputs were checked. */
  readonly batchSize: number;
  readonly priority: number;
  readonly arrivalTime: number;
  /** What the caller added to the request's trace (InferRequest.trace), when it did. */
  readonly trace: CallerTrace | undefined;
}

/** A stage of a request: start and queue. */
export interface RequestStageMessage {
  readonly request: RequestView;
  readonly time: number;
}

/** queue: the request's inputs, as the scheduler takes them (Triton's TENSOR_QUEUE_INPUT). */
export interface RequestQueueMessage extends RequestStageMessage {
  readonly inputs: Readonly<Record<string, Tensor>>;
}

/** The execution a request is part of: one object for every request of a batch. */
export interface ExecutionView {
  /** The batch size the backend ran: the sum of its requests' batch sizes. */
  readonly batchSize: number;
  /** How many requests the execution holds. */
  readonly requestCount: number;
}

/** compute:start, compute:input:end, compute:output:start and compute:end, once for each request of the execution. */
export interface RequestComputeMessage extends RequestStageMessage {
  readonly execution: ExecutionView;
  /**
   * compute:end only: the outputs the backend returned for this request (Triton's
   * TENSOR_BACKEND_OUTPUT); undefined when it failed, or answers through its response
   * sender (decoupled).
   */
  readonly outputs?: Readonly<Record<string, Tensor>>;
}

export interface RequestErrorMessage extends RequestStageMessage {
  readonly error: InferenceError;
}

export interface RequestEndMessage extends RequestStageMessage {
  readonly outcome: 'success' | InferenceErrorCode;
  /** Answered from the response cache without running the model. */
  readonly cached: boolean;
  readonly totalMs: number;
  /** From arrival to the start of its execution; undefined when it never executed. */
  readonly queueMs: number | undefined;
  /** From the start of its execution to its end; undefined when it never executed. */
  readonly computeMs: number | undefined;
}

export const requestStartChannel = channel(REQUEST_CHANNELS.start);
export const requestQueueChannel = channel(REQUEST_CHANNELS.queue);
export const requestComputeStartChannel = channel(REQUEST_CHANNELS.computeStart);
export const requestComputeInputEndChannel = channel(REQUEST_CHANNELS.computeInputEnd);
export const requestComputeOutputStartChannel = channel(REQUEST_CHANNELS.computeOutputStart);
export const requestComputeEndChannel = channel(REQUEST_CHANNELS.computeEnd);
export const requestErrorChannel = channel(REQUEST_CHANNELS.error);
export const requestEndChannel = channel(REQUEST_CHANNELS.end);
