import { performance } from 'node:perf_hooks';
import type { Context, HrTime, Span, Tracer } from '@opentelemetry/api';
import type { TracerProvider } from '@opentelemetry/sdk-trace';
import type { CallerTrace } from './caller-trace.js';
import { CallerWaits } from './caller-waits.js';
import type { OpenTelemetrySdk } from './open-telemetry-sdk.js';
import type { OpenTelemetrySettings } from './open-telemetry-settings.js';
import type { RequestEndMessage, RequestStageMessage, RequestView } from './request-channels.js';
import { RequestObserverRegistration } from './request-observers.js';
import type { TraceSampler } from './trace-sampler.js';

/** Triton's names: its tracer (the instrumentation scope), its root span, its default service. */
const TRACER_NAME = 'triton-server';
const ROOT_SPAN = 'InferRequest';
const SERVICE_NAME = 'triton-inference-server';

/**
 * performance.timeOrigin as whole seconds and the nanoseconds past them. Every time goes
 * through it, so that the spans of one trace share one clock offset (as Triton's one
 * `time_offset_` per trace): the SDK would give each span its own, off by up to 1 ms.
 */
const ORIGIN_SECONDS = Math.trunc(performance.timeOrigin / 1000);
const ORIGIN_NANOS = Math.round((performance.timeOrigin - ORIGIN_SECONDS * 1000) * 1e6);

/** A `performance.now()` time as epoch [seconds, nanoseconds]. */
function epoch(time: number): HrTime {
  const nanos = ORIGIN_NANOS + Math.round(time * 1e6);
  return [ORIGIN_SECONDS + Math.floor(nanos / 1e9), nanos % 1e9];
}

/** The spans of one traced request. */
interface RequestSpans {
  /** The model span: named after the model, with the request's stamps as events. */
  readonly model: Span;
  /** The compute span of the execution in progress. */
  compute: Span | undefined;
  /** A request that is no step of another: the InferRequest span above its model span, for the caller's stamps. */
  readonly root: Span | undefined;
  /** Triton's trace id (`triton.trace_id`), numbering the traces of the server from 1. */
  readonly traceId: number;
}

/**
 * OpenTelemetry-mode tracing of one server's requests, a request observer as RequestTracer
 * is, observing only while some trace setting traces. Spans are laid
 * out as Triton's tracer.cc lays them: an `InferRequest` root span (a child of the
 * caller's span when the request carries a W3C traceparent) holding the caller's stamps
 * (HTTP_RECV_START, …) as events; under it a span named after the model, with
 * REQUEST_START, QUEUE_START and REQUEST_END as events and Triton's `triton.*`
 * attributes; under that a `compute` span per execution with COMPUTE_START,
 * COMPUTE_INPUT_END and COMPUTE_OUTPUT_START (when the backend reports them) and COMPUTE_END. An ensemble step's or a BLS call's model span is a child of its parent
 * request's model span. Ended spans go to a batch span processor, which exports them
 * over OTLP/HTTP off the request path; close() flushes it.
 */
export class OpenTelemetryTracer {
  private readonly spans = new WeakMap<RequestView, RequestSpans>();
  private readonly provider: TracerProvider;
  private readonly tracer: Tracer;
  /** Root spans waiting for their caller to end (it stamps its send times after the response). */
  private readonly waiting = new CallerWaits();
  private nextId = 1;
  private readonly registration = new RequestObserverRegistration({
    start: (message) => this.started(message),
    queue: (message) => this.modelEvent(message, 'QUEUE_START'),
    computeStart: (message) => this.computeStarted(message),
    computeInputEnd: (message) => this.computeEvent(message, 'COMPUTE_INPUT_END'),
    computeOutputStart: (message) => this.computeEvent(message, 'COMPUTE_OUTPUT_START'),
    computeEnd: (message) => this.computeEnded(message),
    end: (message) => this.ended(message),
  });

  constructor(
    private readonly server: object,
    private readonly samplerFor: (model: string) => TraceSampler,
    private readonly sdk: OpenTelemetrySdk,
    settings: OpenTelemetrySettings,
  ) {
    const { tracing, resources, exporter } = sdk;
    // As Triton's: the SDK's defaults, then OTEL_RESOURCE_ATTRIBUTES, then Triton's service name, then the settings' attributes.
    const resource = resources
      .defaultResource()
      .merge(resources.detectResources({ detectors: [resources.envDetector] }))
      .merge(resources.resourceFromAttributes({ 'service.name': SERVICE_NAME, ...settings.resource }));
    const processor = new tracing.BatchSpanProcessor({
      exporter: new exporter.OTLPTraceExporter({ url: settings.url }),
      maxQueueSize: settings.bsp_max_queue_size,
      scheduledDelayMillis: settings.bsp_schedule_delay,
      maxExportBatchSize: settings.bsp_max_export_batch_size,
    });
    // Always on, as Triton's: the trace settings decide which requests are traced, whatever the caller's sampled flag.
    this.provider = new tracing.TracerProvider({ resource, spanProcessors: [processor], sampler: new tracing.AlwaysOnSampler() });
    this.tracer = this.provider.getTracer(TRACER_NAME);
  }

  /** Observes while `on`, and only then; going off (or the server stopping), ends the root spans still waiting for their caller, as RequestTracer writes its traces. */
  setActive(on: boolean): void {
    this.registration.set(on);
    if (!on) this.waiting.flush();
  }

  /** The server stops: ends the root spans still waiting, and exports every span ended. */
  async close(): Promise<void> {
    this.setActive(false);
    await this.provider.shutdown();
  }

  /** Whether the request is traced: sampled or continuing its caller's trace, or a step of a traced request. */
  private started({ request, time }: RequestStageMessage): boolean {
    if (request.server !== this.server) return false;
    const { api } = this.sdk;
    let parentContext: Context;
    let parentId = 0;
    let root: Span | undefined;
    if (request.parent) {
      // A step of an ensemble or a BLS call: traced with its parent request, when that is.
      const parent = this.spans.get(request.parent);
      if (!parent) return false;
      parentContext = api.trace.setSpan(api.ROOT_CONTEXT, parent.model);
      parentId = parent.traceId;
    } else {
      const continued = this.callerContext(request.trace);
      if (!this.samplerFor(request.modelName).sample(continued !== undefined)) return false;
      const startTime = Math.min(time, ...(request.trace?.activities.map((activity) => activity.time) ?? []));
      root = this.tracer.startSpan(ROOT_SPAN, { kind: api.SpanKind.SERVER, startTime: epoch(startTime) }, continued ?? api.ROOT_CONTEXT);
      parentContext = api.trace.setSpan(api.ROOT_CONTEXT, root);
    }
    const traceId = this.nextId++;
    const attributes = {
      'triton.model_name': request.modelName,
      'triton.model_version': request.modelVersion ?? -1,
      'triton.trace_id': traceId,
      'triton.trace_parent_id': parentId,
      ...(request.id === '' ? {} : { 'triton.request_id': request.id }),
    };
    const model = this.tracer.startSpan(request.modelName, { kind: api.SpanKind.SERVER, startTime: epoch(time), attributes }, parentContext);
    model.addEvent('REQUEST_START', epoch(time));
    this.spans.set(request, { model, compute: undefined, root, traceId });
    return true;
  }

  private modelEvent({ request, time }: RequestStageMessage, name: string): void {
    this.spans.get(request)?.model.addEvent(name, epoch(time));
  }

  private computeStarted({ request, time }: RequestStageMessage): void {
    const spans = this.spans.get(request);
    if (!spans) return;
    const { api } = this.sdk;
    spans.compute = this.tracer.startSpan('compute', { kind: api.SpanKind.SERVER, startTime: epoch(time) }, api.trace.setSpan(api.ROOT_CONTEXT, spans.model));
    spans.compute.addEvent('COMPUTE_START', epoch(time));
  }

  private computeEvent({ request, time }: RequestStageMessage, name: string): void {
    this.spans.get(request)?.compute?.addEvent(name, epoch(time));
  }

  private computeEnded({ request, time }: RequestStageMessage): void {
    const spans = this.spans.get(request);
    if (!spans?.compute) return;
    spans.compute.addEvent('COMPUTE_END', epoch(time));
    spans.compute.end(epoch(time));
    spans.compute = undefined;
  }

  // The request's state stays in the WeakMap: a cancelled request's execution ends (compute:end) after it.
  private ended({ request, time, outcome }: RequestEndMessage): void {
    const spans = this.spans.get(request);
    if (!spans) return;
    spans.model.addEvent('REQUEST_END', epoch(time));
    if (outcome !== 'success') spans.model.setStatus({ code: this.sdk.api.SpanStatusCode.ERROR, message: outcome });
    spans.model.end(epoch(time));
    if (spans.root) this.endRoot(spans.root, request.trace, time);
  }

  /** Ends the root span once the caller has stamped its last activity (at once when it stamps none after the response). */
  private endRoot(root: Span, trace: CallerTrace | undefined, requestEnd: number): void {
    this.waiting.after(trace, () => {
      const activities = trace?.activities ?? [];
      for (const activity of activities) root.addEvent(activity.name, epoch(activity.time));
      root.end(epoch(Math.max(requestEnd, ...activities.map((activity) => activity.time))));
    });
  }

  /** The caller's span, from the W3C traceparent (and tracestate) its request carries, when it is a valid one. */
  private callerContext(trace: CallerTrace | undefined): Context | undefined {
    const { api } = this.sdk;
    // CallerTrace has checked the form: version-traceid-spanid-flags, in lower-case hex.
    const [version, traceId, spanId, flags] = trace?.traceparent?.split('-') ?? [];
    if (version === undefined || version === 'ff' || traceId === undefined || spanId === undefined || flags === undefined) return undefined;
    const traceState = trace?.tracestate ? api.createTraceState(trace.tracestate) : undefined;
    const spanContext = { traceId, spanId, traceFlags: Number.parseInt(flags, 16) & api.TraceFlags.SAMPLED, isRemote: true, traceState };
    return api.trace.isSpanContextValid(spanContext) ? api.trace.setSpanContext(api.ROOT_CONTEXT, spanContext) : undefined;
  }
}
