import type { Channel } from 'node:diagnostics_channel';
import { performance } from 'node:perf_hooks';
import type { BackendRequest, ExecuteResult } from '../contract/backend.js';
import type { InferRequest } from '../contract/inference.js';
import { InferenceError } from '../errors.js';
import { checkCallerTrace, type CallerTrace } from './caller-trace.js';
import type { Tensor } from '../tensor/tensor.js';
import {
  requestComputeEndChannel,
  requestComputeInputEndChannel,
  requestComputeOutputStartChannel,
  requestComputeStartChannel,
  requestEndChannel,
  requestErrorChannel,
  requestQueueChannel,
  requestStartChannel,
  type ExecutionView,
  type RequestComputeMessage,
  type RequestEndMessage,
  type RequestQueueMessage,
  type RequestView,
} from './request-channels.js';
import { followersOf, isObservingRequests, tellFollowers, type RequestObserver } from './request-observers.js';

/**
 * Builds and publishes the request channels' messages (request-channels.ts), and hands
 * them to the core observers that follow the request (request-observers.ts). Callers
 * check whether a stage is heard first (isObservingRequests for a start, isHeard for
 * the rest), so that with nobody listening nothing here runs.
 */

/** The compute stages, by their channel. */
type ComputeStage = 'computeStart' | 'computeInputEnd' | 'computeOutputStart' | 'computeEnd';
const COMPUTE_STAGES = new Map<Channel, ComputeStage>([
  [requestComputeStartChannel, 'computeStart'],
  [requestComputeInputEndChannel, 'computeInputEnd'],
  [requestComputeOutputStartChannel, 'computeOutputStart'],
  [requestComputeEndChannel, 'computeEnd'],
]);

/** What publishing reads of an accepted request (an InferenceRequest): what its view shows, and where it keeps the view. */
export interface ObservedRequest extends Omit<RequestView, 'serial' | 'parent' | 'server'> {
  readonly executeStart: number;
  channelView: RequestView | undefined;
  /** The core observers that follow the request, chosen at its start. */
  observers: RequestObserver[] | undefined;
}

/** Whether a stage of `request` past its start is heard: by the stage's channel, or by an observer that follows the request. */
export function isHeard(channel: Channel, request: ObservedRequest): boolean {
  return channel.hasSubscribers || request.observers !== undefined;
}

/** Whether a compute stage of an execution may be heard (its requests are checked one by one when it is published). */
export function isComputeHeard(channel: Channel): boolean {
  return channel.hasSubscribers || isObservingRequests();
}

/** A request of an execution: the request it reports for (none for an empty slot of a sequence batch), and its part of the batch. */
export interface ExecutedRequest {
  readonly observed: ObservedRequest | undefined;
  readonly batchSize: number;
}

let serials = 0;
/** The request whose child (an ensemble step, a BLS call) the server is starting now (startStep), taken by the child's start. */
let stepParent: RequestView | undefined;

/**
 * Runs `start`, which starts one child of `parent` through the server (an ensemble step, or
 * a BLS call by startChildRequest), so that the child's request names `parent` as its
 * parent: the server accepts (or refuses) a request synchronously, before `start` returns.
 */
export function startStep<T>(parent: ObservedRequest, start: () => T): T {
  // The parent is named even when nobody follows it: an observer then leaves its steps alone too.
  if (!isObservingRequests()) return start();
  const outer = stepParent;
  stepParent = viewOf(parent);
  try {
    return start();
  } finally {
    stepParent = outer;
  }
}

/**
 * For backends: runs `start`, which starts a request through the server (ModelContext.server's
 * infer, startInference, inferStream), so that the new request is a child of `parent`, a
 * request the backend is executing, in the request channels and traces (Triton's
 * TRITONSERVER_InferenceTraceSpawnChildTrace, as its Python backend does for a BLS call).
 */
export function startChildRequest<T>(parent: BackendRequest, start: () => T): T {
  const observed = (parent as Partial<ExecutedRequest>).observed;
  return observed ? startStep(observed, start) : start();
}

/** tritium:request:start for an accepted request. */
export function publishStart(request: ObservedRequest, server: object): void {
  const parent = stepParent;
  // Taken by the step's own request: a request that the step starts in turn is no step of the ensemble.
  stepParent = undefined;
  const view = newView(request, parent, server);
  request.channelView = view;
  const message = { request: view, time: request.arrivalTime };
  if (requestStartChannel.hasSubscribers) requestStartChannel.publish(message);
  request.observers = followersOf(message);
}

/** tritium:request:queue, with the request's inputs. */
export function publishQueue(request: ObservedRequest & { readonly inputs: Readonly<Record<string, Tensor>> }): void {
  const message: RequestQueueMessage = { request: viewOf(request), time: performance.now(), inputs: request.inputs };
  if (requestQueueChannel.hasSubscribers) requestQueueChannel.publish(message);
  if (request.observers) tellFollowers(request.observers, 'queue', message);
}

/**
 * A compute stage (`channel`) for each request of an execution that it is heard for;
 * returns the execution's view (made when first heard), for its other stages. `results`:
 * what the execution returned (compute:end), by request.
 */
export function publishCompute(channel: Channel, requests: readonly ExecutedRequest[], time: number, execution?: ExecutionView, results?: ExecuteResult | void): ExecutionView | undefined {
  const stage = COMPUTE_STAGES.get(channel)!;
  for (const [i, { observed }] of requests.entries()) {
    if (!observed || !isHeard(channel, observed)) continue;
    const result = results?.[i];
    const message: RequestComputeMessage = { request: viewOf(observed), time, execution: (execution ??= executionOf(requests)), outputs: result instanceof Error ? undefined : result };
    if (channel.hasSubscribers) channel.publish(message);
    if (observed.observers) tellFollowers(observed.observers, stage, message);
  }
  return execution;
}

/** tritium:request:error (when it failed), then tritium:request:end. */
export function publishEnd(request: ObservedRequest, error: InferenceError | undefined, time: number, cached: boolean): void {
  const view = viewOf(request);
  const { observers } = request;
  if (error && (requestErrorChannel.hasSubscribers || observers)) {
    const message = { request: view, time, error };
    if (requestErrorChannel.hasSubscribers) requestErrorChannel.publish(message);
    if (observers) tellFollowers(observers, 'error', message);
  }
  if (!requestEndChannel.hasSubscribers && !observers) return;
  const executed = !cached && request.executeStart > 0;
  const message: RequestEndMessage = {
    request: view,
    time,
    outcome: error ? error.code : 'success',
    cached,
    totalMs: time - request.arrivalTime,
    queueMs: executed ? request.executeStart - request.arrivalTime : undefined,
    computeMs: executed ? time - request.executeStart : undefined,
  };
  if (requestEndChannel.hasSubscribers) requestEndChannel.publish(message);
  if (observers) tellFollowers(observers, 'end', message);
}

/**
 * A request the server refused before accepting it (no such model, invalid inputs, a
 * stopping server): start, error and end at once, so that every start has its end.
 */
export function publishRefusal(server: object, modelName: string, modelVersion: number | undefined, request: InferRequest | undefined, error: unknown): void {
  if (!isObservingRequests() && !requestErrorChannel.hasSubscribers && !requestEndChannel.hasSubscribers) return;
  const time = performance.now();
  const id = typeof request?.id === 'string' ? request.id : '';
  const priority = typeof request?.priority === 'number' ? request.priority : 0;
  const trace = checkedOrNone(request?.trace);
  const refused: ObservedRequest = { modelName, modelVersion, id, batchSize: 0, priority, arrivalTime: time, trace, executeStart: 0, channelView: undefined, observers: undefined };
  if (isObservingRequests()) publishStart(refused, server);
  publishEnd(refused, InferenceError.from(error), time, false);
}

/** The request's view, made now if no start was published for it (a subscriber that came later: its parent is not known). */
function viewOf(request: ObservedRequest): RequestView {
  return (request.channelView ??= newView(request, undefined, undefined));
}

function newView(request: ObservedRequest, parent: RequestView | undefined, server: object | undefined): RequestView {
  const { id, modelName, modelVersion, batchSize, priority, arrivalTime, trace } = request;
  return { serial: ++serials, server, parent, id, modelName, modelVersion, batchSize, priority, arrivalTime, trace };
}

function executionOf(requests: readonly ExecutedRequest[]): ExecutionView {
  let batchSize = 0;
  for (const request of requests) batchSize += request.batchSize;
  return { batchSize, requestCount: requests.length };
}

/** A refused request's trace, unless the trace is what was wrong with it. */
function checkedOrNone(trace: unknown): CallerTrace | undefined {
  try {
    return checkCallerTrace(trace);
  } catch {
    return undefined;
  }
}
