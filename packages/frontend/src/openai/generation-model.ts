import type { InferRequest, TensorInput } from '@tritium/core';
import type { CatalogModel } from './model-catalog.js';
import { OpenAIError, unsupportedField } from './openai-error.js';

/**
 * Triton's LLM-backend tensors, as its vLLM backend names them: the prompt, whether to
 * stream, the sampling parameters as JSON, echo, and the optional extra outputs, each
 * asked for with a BOOL input of its own.
 */
export const LLM_TENSORS = {
  prompt: 'text_input',
  stream: 'stream',
  samplingParameters: 'sampling_parameters',
  text: 'text_output',
  inputTokens: 'num_input_tokens',
  outputTokens: 'num_output_tokens',
  logprobs: 'logprobs',
  finishReason: 'finish_reason',
} as const;

/** The inputs that exclude the prompt from the output, as Triton's frontend looks for them (vLLM's name, then TensorRT-LLM's). */
const ECHO_INPUTS = ['exclude_input_in_output', 'sampling_param_exclude_input_from_output'];

/** What one generation asks of the model. */
export interface Generation {
  readonly prompt: string;
  readonly stream: boolean;
  /** vLLM's sampling parameters, sent as JSON. */
  readonly samplingParameters: Readonly<Record<string, unknown>>;
  /** OpenAI's `echo`: the prompt before the completion. */
  readonly echo: boolean;
  readonly logprobs: boolean;
}

/** A text-generation model: one with Triton's LLM tensors, and which of the optional ones it has. */
export class GenerationModel {
  private readonly inputs: Set<string>;
  private readonly outputs: Set<string>;

  constructor(readonly model: CatalogModel) {
    const { facts } = model;
    this.inputs = new Set(facts.inputs.map((input) => input.name));
    this.outputs = new Set(facts.outputs.map((output) => output.name));
    if (!this.inputs.has(LLM_TENSORS.prompt) || !this.inputs.has(LLM_TENSORS.samplingParameters) || !this.outputs.has(LLM_TENSORS.text)) {
      throw new OpenAIError(
        400,
        `model '${facts.name}' is not a text-generation model: it needs '${LLM_TENSORS.prompt}' and '${LLM_TENSORS.samplingParameters}' inputs and a '${LLM_TENSORS.text}' output (docs/openai.md)`,
        { param: 'model', code: 'model_not_supported' },
      );
    }
  }

  /** Whether the model reports token counts, so that answers carry `usage`. */
  get countsTokens(): boolean {
    const has = (output: string) => this.outputs.has(output) && this.inputs.has(`return_${output}`);
    return has(LLM_TENSORS.inputTokens) && has(LLM_TENSORS.outputTokens);
  }

  /** Refuses logprobs where the model gives none, as Triton's frontend refuses them for a backend that gives none. */
  checkLogprobs(param: string): void {
    if (!this.outputs.has(LLM_TENSORS.logprobs) || !this.inputs.has(`return_${LLM_TENSORS.logprobs}`)) {
      throw unsupportedField(param, `logprobs are not available for model '${this.model.facts.name}': it has no '${LLM_TENSORS.logprobs}' output`);
    }
  }

  /** The inference request for `generation`, with each optional input the model has. */
  request(generation: Generation, signal: AbortSignal): InferRequest {
    const { maxBatchSize } = this.model.facts;
    // One element, batched as the model is (Triton's vLLM models take [1]; a batching model [1, 1]).
    const shape = maxBatchSize > 0 ? [1, 1] : [1];
    const inputs: Record<string, TensorInput> = {
      [LLM_TENSORS.prompt]: { datatype: 'BYTES', shape, data: [generation.prompt] },
      [LLM_TENSORS.samplingParameters]: { datatype: 'BYTES', shape, data: [JSON.stringify(generation.samplingParameters)] },
    };
    const flag = (name: string, value: boolean) => {
      if (this.inputs.has(name)) inputs[name] = { datatype: 'BOOL', shape, data: [value] };
    };
    flag(LLM_TENSORS.stream, generation.stream);
    const echoInput = ECHO_INPUTS.find((name) => this.inputs.has(name));
    if (echoInput) flag(echoInput, !generation.echo);
    else if (generation.echo) throw unsupportedField('echo', `model '${this.model.facts.name}' cannot echo the prompt: it has no '${ECHO_INPUTS[0]}' input`);
    // Each extra output is asked for with its own flag, and read only where asked for: the model sends it only then.
    const outputs: string[] = [LLM_TENSORS.text];
    const extra = (output: string, wanted: boolean) => {
      const input = `return_${output}`;
      if (!wanted || !this.inputs.has(input) || !this.outputs.has(output)) return;
      inputs[input] = { datatype: 'BOOL', shape, data: [true] };
      outputs.push(output);
    };
    extra(LLM_TENSORS.inputTokens, true);
    extra(LLM_TENSORS.outputTokens, true);
    extra(LLM_TENSORS.finishReason, true);
    extra(LLM_TENSORS.logprobs, generation.logprobs);
    return { inputs, outputs, signal };
  }
}
