import type { BatchBuffers } from '../backend/batch-buffers.js';
import type { SequenceOptions } from '../contract/inference.js';
import { InferenceError } from '../errors.js';
import type { ObservedRequest } from '../observability/request-publishing.js';
import { createTensorData } from '../tensor/data.js';
import type { Tensor } from '../tensor/tensor.js';
import type { InferenceRequest, RequestParameters } from './inference-request.js';
import type { ExecutionTimes } from './execution-times.js';
import type { DeliveringSender, ScheduledRequest } from './instance-runner.js';
import type { SequenceControls } from './sequence-controls.js';
import type { SequenceStates } from './sequence-states.js';

/** An empty slot's answer goes nowhere. */
const DISCARD: DeliveringSender = { send: () => false, close: () => {}, fail: () => {} };

/**
 * One step of a sequence as the backend runs it: the caller's inputs plus the control
 * inputs and the sequence's state, answering through the caller's request with the
 * state outputs kept back for the next step. An empty slot of a direct batch is a step
 * too: zeros shaped like its batch's first request, READY false, answered nowhere.
 */
export class SequenceStep implements ScheduledRequest {
  readonly inputs: Readonly<Record<string, Tensor>>;
  readonly requestedOutputs: readonly string[];
  readonly response: DeliveringSender;
  /** Set by the instance runner while the step executes. */
  batchBuffers: BatchBuffers | undefined = undefined;

  private constructor(
    private readonly request: InferenceRequest,
    inputs: Record<string, Tensor>,
    private readonly emptySlot: boolean,
    states: SequenceStates | undefined,
    sequenceKey: string,
  ) {
    this.inputs = inputs;
    this.requestedOutputs = states ? [...request.requestedOutputs, ...states.outputNames] : request.requestedOutputs;
    this.response = emptySlot ? DISCARD : states ? statefulSender(request, states, sequenceKey) : request.response;
  }

  static of(request: InferenceRequest, sequenceKey: string, controls: SequenceControls, states: SequenceStates | undefined): SequenceStep {
    const { id, start = false, end = false } = request.sequence!;
    const inputs = { ...request.inputs, ...controls.tensors({ start, end, ready: true, id }), ...states?.inputs(sequenceKey, start) };
    return new SequenceStep(request, inputs, false, states, sequenceKey);
  }

  /** A slot with no request, beside `template` (a step of the same batch). */
  static emptySlot(template: SequenceStep, controls: SequenceControls, states: SequenceStates | undefined): SequenceStep {
    const inputs: Record<string, Tensor> = {};
    for (const [name, tensor] of Object.entries(template.request.inputs)) {
      inputs[name] = { datatype: tensor.datatype, shape: [...tensor.shape], data: createTensorData(tensor.datatype, tensor.data.length) };
    }
    Object.assign(inputs, controls.tensors({ start: false, end: false, ready: false, id: undefined }), states?.initialInputs);
    return new SequenceStep(template.request, inputs, true, states, '');
  }

  get id(): string {
    return this.emptySlot ? '' : this.request.id;
  }

  get modelName(): string {
    return this.request.modelName;
  }

  get modelVersion(): number {
    return this.request.modelVersion;
  }

  get parameters(): RequestParameters {
    return this.request.parameters;
  }

  get batchSize(): number {
    return 1;
  }

  get priority(): number {
    return this.request.priority;
  }

  get timeoutMicroseconds(): number {
    return this.request.timeoutMicroseconds;
  }

  get sequence(): SequenceOptions | undefined {
    return this.emptySlot ? undefined : this.request.sequence;
  }

  get isCancelled(): boolean {
    return !this.emptySlot && this.request.isCancelled;
  }

  get observed(): ObservedRequest | undefined {
    return this.emptySlot ? undefined : this.request;
  }

  onCancel(listener: () => void): () => void {
    return this.emptySlot ? () => {} : this.request.onCancel(listener);
  }

  get executeStart(): number {
    return this.request.executeStart;
  }

  set executeStart(time: number) {
    if (!this.emptySlot) this.request.executeStart = time;
  }

  get executeEnd(): number {
    return this.request.executeEnd;
  }

  set executeEnd(time: number) {
    if (!this.emptySlot) this.request.executeEnd = time;
  }

  get executionTimes(): ExecutionTimes | undefined {
    return this.request.executionTimes;
  }

  set executionTimes(times: ExecutionTimes | undefined) {
    if (!this.emptySlot) this.request.executionTimes = times;
  }

  describe(): string {
    return this.emptySlot ? `${this.request.describe()} (an empty slot beside it)` : this.request.describe();
  }
}

/** Keeps the state outputs for the sequence's next step; the caller gets the rest. */
function statefulSender(request: InferenceRequest, states: SequenceStates, sequenceKey: string): DeliveringSender {
  return {
    send(outputs, options) {
      let rest: Record<string, Tensor>;
      try {
        rest = states.update(sequenceKey, outputs);
      } catch (error) {
        request.response.fail(InferenceError.from(error, 'INTERNAL', request.describe()));
        return false;
      }
      return request.response.send(rest, options);
    },
    close: () => request.response.close(),
    fail: (error) => request.response.fail(error),
  };
}
