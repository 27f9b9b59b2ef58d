import type { NormalizedModelConfig, SequenceControlKind } from '../config/schema.js';
import type { SequenceOptions } from '../contract/inference.js';
import { createTensorData } from '../tensor/data.js';
import { dataTypeFromConfig, type DataType } from '../tensor/datatype.js';
import type { Tensor } from '../tensor/tensor.js';

/** What a control tensor says about one batch slot. */
export interface SlotControl {
  readonly start: boolean;
  readonly end: boolean;
  /** False for a slot with no request in a direct batch. */
  readonly ready: boolean;
  readonly id: SequenceOptions['id'] | undefined;
}

interface ControlTensor {
  readonly name: string;
  readonly kind: SequenceControlKind;
  readonly datatype: DataType;
  /** [false value, true value] of a START/END/READY control. */
  readonly falseTrue: readonly [number | boolean, number | boolean];
}

/**
 * The sequence batcher's control inputs (START, END, READY, CORRID), built for each
 * request as Triton builds them: one element per request, shape [1] (after the batch
 * dimension when the model batches), holding the configured false/true value or the
 * correlation id. The backend receives them as ordinary inputs.
 */
export class SequenceControls {
  private readonly controls: ControlTensor[] = [];
  private readonly shape: number[];

  constructor(config: NormalizedModelConfig) {
    this.shape = config.max_batch_size > 0 ? [1, 1] : [1];
    for (const input of config.sequence_batching?.control_input ?? []) {
      for (const control of input.control) {
        // Validation saw to it that a START/END/READY control gives exactly one false/true pair.
        const [datatype, pair]: [DataType, readonly (number | boolean)[]] =
          control.kind === 'CONTROL_SEQUENCE_CORRID' ? [dataTypeFromConfig(control.data_type), []]
          : control.int32_false_true.length > 0 ? ['INT32', control.int32_false_true]
          : control.fp32_false_true.length > 0 ? ['FP32', control.fp32_false_true]
          : ['BOOL', control.bool_false_true];
        this.controls.push({ name: input.name, kind: control.kind, datatype, falseTrue: [pair[0] ?? 0, pair[1] ?? 1] });
      }
    }
  }

  /** The control inputs of one slot. */
  tensors(slot: SlotControl): Record<string, Tensor> {
    const tensors: Record<string, Tensor> = {};
    for (const control of this.controls) tensors[control.name] = this.tensor(control, slot);
    return tensors;
  }

  private tensor(control: ControlTensor, slot: SlotControl): Tensor {
    if (control.kind === 'CONTROL_SEQUENCE_CORRID') return this.correlationId(control.datatype, slot.id);
    const on = control.kind === 'CONTROL_SEQUENCE_START' ? slot.start : control.kind === 'CONTROL_SEQUENCE_END' ? slot.end : slot.ready;
    const value = control.falseTrue[on ? 1 : 0]!;
    const data = createTensorData(control.datatype, 1) as Int32Array | Float32Array | Uint8Array;
    data[0] = Number(value);
    return { datatype: control.datatype, shape: [...this.shape], data };
  }

  /** The id in the CORRID control's type (the door checked that it fits); 0 or '' for an empty slot. */
  private correlationId(datatype: DataType, id: SequenceOptions['id'] | undefined): Tensor {
    if (datatype === 'BYTES') return { datatype, shape: [...this.shape], data: [typeof id === 'string' ? id : ''] };
    const data = createTensorData(datatype, 1) as BigUint64Array | BigInt64Array | Uint32Array | Int32Array;
    if (data instanceof BigUint64Array || data instanceof BigInt64Array) data[0] = BigInt(id ?? 0);
    else data[0] = Number(id ?? 0);
    return { datatype, shape: [...this.shape], data };
  }
}
