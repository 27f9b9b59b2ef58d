import { bytesElementToString, InferenceError, type BackendRequest, type ModelInput, type ModelOutput, type Tensor } from '@tritium/core/backend';
import type { TokenLogprobs } from './token-logprobs.js';
import { parseSamplingJson, parseSamplingParameters, type SamplingParameters } from './sampling-parameters.js';

/** The tensors of Triton's vLLM backend, as its auto-complete lists them (less `image` and `embedding_request`). */
// The return_* inputs are accepted, as clients of Triton's vLLM backend send them; the outputs asked for are sent.
export const INPUTS: readonly ModelInput[] = [
  { name: 'text_input', data_type: 'TYPE_STRING', dims: [1] },
  { name: 'stream', data_type: 'TYPE_BOOL', dims: [1], optional: true },
  { name: 'sampling_parameters', data_type: 'TYPE_STRING', dims: [1], optional: true },
  { name: 'exclude_input_in_output', data_type: 'TYPE_BOOL', dims: [1], optional: true },
  { name: 'return_finish_reason', data_type: 'TYPE_BOOL', dims: [1], optional: true },
  { name: 'return_cumulative_logprob', data_type: 'TYPE_BOOL', dims: [1], optional: true },
  { name: 'return_logprobs', data_type: 'TYPE_BOOL', dims: [1], optional: true },
  { name: 'return_num_input_tokens', data_type: 'TYPE_BOOL', dims: [1], optional: true },
  { name: 'return_num_output_tokens', data_type: 'TYPE_BOOL', dims: [1], optional: true },
];

export const OUTPUTS: readonly ModelOutput[] = [
  { name: 'text_output', data_type: 'TYPE_STRING', dims: [-1] },
  { name: 'finish_reason', data_type: 'TYPE_STRING', dims: [-1] },
  { name: 'cumulative_logprob', data_type: 'TYPE_FP32', dims: [-1] },
  { name: 'logprobs', data_type: 'TYPE_STRING', dims: [-1] },
  { name: 'num_input_tokens', data_type: 'TYPE_UINT32', dims: [1] },
  { name: 'num_output_tokens', data_type: 'TYPE_UINT32', dims: [-1] },
];

type OutputName = 'text_output' | 'finish_reason' | 'cumulative_logprob' | 'logprobs' | 'num_input_tokens' | 'num_output_tokens';
const OUTPUT_NAMES: ReadonlySet<string> = new Set(OUTPUTS.map((output) => output.name!));

/** Why a generation ended, in vLLM's words: a stop string, stop token or EOS; or max_tokens or the context's end. */
export type FinishReason = 'stop' | 'length';

/** One request's inputs, read. */
export interface GenerateRequest {
  readonly prompt: string;
  readonly stream: boolean;
  /** Whether the prompt leads the text of a non-streamed response (vLLM's exclude_input_in_output = false). */
  readonly prependInput: boolean;
  readonly sampling: SamplingParameters;
  /**
   * The outputs to send: those asked for (all when the caller names none). Unlike vLLM's,
   * not only those a return_* input turns on: Tritium's core holds a backend to every output asked for.
   */
  readonly outputs: ReadonlySet<OutputName>;
}

function flag(request: BackendRequest, name: string): boolean | undefined {
  const tensor = request.inputs[name];
  return tensor ? (tensor.data as Uint8Array)[0] === 1 : undefined;
}

function text(tensor: Tensor): string {
  return bytesElementToString((tensor.data as readonly (string | Uint8Array)[])[0]!);
}

/** Reads a request as Triton's vLLM backend does; bad sampling parameters are refused naming the field. */
export function readGenerateRequest(request: BackendRequest): GenerateRequest {
  const stream = flag(request, 'stream') ?? false;
  const exclude = flag(request, 'exclude_input_in_output');
  // vLLM: the prompt is prepended unless excluded, and by default not when streaming, where it may not be asked for.
  const prependInput = exclude === undefined ? !stream : !exclude;
  if (prependInput && stream) throw new InferenceError('INVALID_ARG', "when streaming, 'exclude_input_in_output' = false is not allowed");
  const samplingTensor = request.inputs.sampling_parameters;
  const sampling = samplingTensor ? parseSamplingJson(text(samplingTensor)) : parseSamplingParameters(request.parameters);
  const outputs = new Set(request.requestedOutputs.filter((name): name is OutputName => OUTPUT_NAMES.has(name)));
  return { prompt: text(request.inputs.text_input!), stream, prependInput, sampling, outputs };
}

/** One response's tensors: those of the outputs asked for. */
export function responseTensors(
  request: GenerateRequest,
  part: { text: string; inputTokens: number; outputTokens: number; finishReason: FinishReason | undefined; logprobs: TokenLogprobs },
): Record<string, Tensor> {
  const tensors: Record<string, Tensor> = {};
  if (request.outputs.has('text_output')) tensors.text_output = { datatype: 'BYTES', shape: [1], data: [part.text] };
  if (request.outputs.has('finish_reason')) tensors.finish_reason = { datatype: 'BYTES', shape: [1], data: [part.finishReason ?? 'None'] };
  if (request.outputs.has('cumulative_logprob')) tensors.cumulative_logprob = { datatype: 'FP32', shape: [1], data: Float32Array.of(part.logprobs.cumulative) };
  if (request.outputs.has('logprobs')) tensors.logprobs = { datatype: 'BYTES', shape: [1], data: [part.logprobs.takeJson()] };
  if (request.outputs.has('num_input_tokens')) tensors.num_input_tokens = { datatype: 'UINT32', shape: [1], data: Uint32Array.of(part.inputTokens) };
  if (request.outputs.has('num_output_tokens')) tensors.num_output_tokens = { datatype: 'UINT32', shape: [1], data: Uint32Array.of(part.outputTokens) };
  return tensors;
}
