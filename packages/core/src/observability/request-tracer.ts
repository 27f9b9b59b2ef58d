import { performance } from 'node:perf_hooks';
import type { Tensor } from '../tensor/tensor.js';
import { CallerWaits } from './caller-waits.js';
import type { RequestComputeMessage, RequestQueueMessage, RequestStageMessage, RequestView } from './request-channels.js';
import { RequestObserverRegistration } from './request-observers.js';
import type { TraceSampler } from './trace-sampler.js';
import { tensorEntry } from './trace-tensor.js';

/** Process-monotonic nanoseconds at performance.now() = 0: Triton's timestamps are steady-clock nanoseconds. */
const NS_AT_ORIGIN = process.hrtime.bigint() - BigInt(Math.round(performance.now() * 1e6));

function nanoseconds(time: number): string {
  return String(NS_AT_ORIGIN + BigInt(Math.round(time * 1e6)));
}

/** One sampled request and the traces of its ensemble steps, written together as Triton writes a trace's streams. */
interface TraceGroup {
  readonly sampler: TraceSampler;
  readonly timestamps: boolean;
  readonly tensors: boolean;
  /** One entry list per trace: the root first, then its steps in the order they started. */
  readonly traces: string[][];
}

interface Trace {
  readonly group: TraceGroup;
  readonly id: number;
  readonly entries: string[];
  readonly root: boolean;
  /** How many of the caller's activities (RequestView.trace) are written so far. */
  callerWritten: number;
}

/**
 * Triton-mode tracing of one server's requests, a request observer (request-observers.ts):
 * it observes only while some trace setting traces, so with tracing off the request path
 * pays one check per stage, and it follows only the requests it samples. A request is
 * sampled when it starts, by the setting for its model; an ensemble's steps and BLS calls
 * are traced with it, as child traces naming it in `parent_id`. The caller's activities (a frontend's HTTP_RECV_START,
 * …, on the request's CallerTrace) go into its trace as Triton's frontends write them:
 * those stamped before the request started ahead of its entries, the rest after its
 * REQUEST_END. A trace is collected when its request ends and its caller has ended.
 */
export class RequestTracer {
  private readonly traces = new WeakMap<RequestView, Trace>();
  /** Sampled traces whose request has ended, waiting for their caller to end. */
  private readonly awaitingCaller = new CallerWaits();
  private nextId = 1;
  private readonly registration = new RequestObserverRegistration({
    start: (message) => this.started(message),
    queue: (message) => this.queued(message),
    computeStart: (message) => this.stamp(message, 'COMPUTE_START'),
    computeInputEnd: (message) => this.stamp(message, 'COMPUTE_INPUT_END'),
    computeOutputStart: (message) => this.stamp(message, 'COMPUTE_OUTPUT_START'),
    computeEnd: (message) => this.computed(message),
    end: (message) => this.ended(message),
  });

  constructor(
    private readonly server: object,
    private readonly samplerFor: (model: string) => TraceSampler,
  ) {}

  /** Observes while `on`, and only then; going off (or the server stopping), writes the traces still waiting for their caller. */
  setActive(on: boolean): void {
    this.registration.set(on);
    if (!on) this.awaitingCaller.flush();
  }

  /** Whether the request is traced: sampled, or a step of a traced request. */
  private started({ request, time }: RequestStageMessage): boolean {
    if (request.server !== this.server) return false;
    const parent = request.parent && this.traces.get(request.parent);
    let group: TraceGroup;
    if (parent) {
      group = parent.group;
    } else if (request.parent) {
      // A step of an ensemble request that was not sampled: as in Triton, only a traced request spawns child traces.
      return false;
    } else {
      const sampler = this.samplerFor(request.modelName);
      if (!sampler.sample()) return false;
      const levels = sampler.settings.trace_level;
      group = { sampler, timestamps: levels.includes('TIMESTAMPS'), tensors: levels.includes('TENSORS'), traces: [] };
    }
    const id = this.nextId++;
    const trace: Trace = { group, id, entries: [], root: !parent, callerWritten: 0 };
    group.traces.push(trace.entries);
    this.traces.set(request, trace);
    // As Triton: the entry naming the trace comes with its first timestamp, so the TENSORS level alone has none.
    if (!group.timestamps) return true;
    // As Triton's frontends: what they stamped before handing the request over comes first.
    this.writeCallerActivities(request, trace);
    const model = `{"id":${id},"model_name":${JSON.stringify(request.modelName)},"model_version":${request.modelVersion ?? -1}`;
    const requestId = request.id === '' ? '' : `,"request_id":${JSON.stringify(request.id)}`;
    const parentId = parent ? `,"parent_id":${parent.id}` : '';
    trace.entries.push(model + requestId + parentId + '}');
    this.stamp({ request, time }, 'REQUEST_START');
    return true;
  }

  private queued(message: RequestQueueMessage): void {
    this.stamp(message, 'QUEUE_START');
    this.tensors(message.request, 'TENSOR_QUEUE_INPUT', message.inputs);
  }

  private computed(message: RequestComputeMessage): void {
    this.tensors(message.request, 'TENSOR_BACKEND_OUTPUT', message.outputs);
    this.stamp(message, 'COMPUTE_END');
  }

  private stamp({ request, time }: RequestStageMessage, activity: string): void {
    const trace = this.traces.get(request);
    if (trace?.group.timestamps) trace.entries.push(timestampEntry(trace.id, activity, time));
  }

  /** The caller's activities not yet written. */
  private writeCallerActivities(request: RequestView, trace: Trace): void {
    const activities = request.trace?.activities;
    if (!activities || !trace.group.timestamps) return;
    for (; trace.callerWritten < activities.length; trace.callerWritten++) {
      const { name, time } = activities[trace.callerWritten]!;
      trace.entries.push(timestampEntry(trace.id, name, time));
    }
  }

  private tensors(request: RequestView, activity: 'TENSOR_QUEUE_INPUT' | 'TENSOR_BACKEND_OUTPUT', tensors: Readonly<Record<string, Tensor>> | undefined): void {
    const trace = this.traces.get(request);
    if (!trace?.group.tensors || !tensors) return;
    for (const [name, tensor] of Object.entries(tensors)) trace.entries.push(tensorEntry(trace.id, activity, name, tensor));
  }

  private ended(message: RequestStageMessage): void {
    const { request } = message;
    const trace = this.traces.get(request);
    if (!trace) return;
    this.stamp(message, 'REQUEST_END');
    this.traces.delete(request);
    // A frontend stamps its send activities after the response, and ends the CallerTrace once it has written it (or failed to).
    this.awaitingCaller.after(request.trace, () => {
      this.writeCallerActivities(request, trace);
      if (trace.root) trace.group.sampler.collect(trace.group.traces.flatMap((entries) => (entries.length > 0 ? [entries.join(',')] : [])).join(','));
    });
  }
}

function timestampEntry(id: number, activity: string, time: number): string {
  return `{"id":${id},"timestamps":[{"name":${JSON.stringify(activity)},"ns":${nanoseconds(time)}}]}`;
}
