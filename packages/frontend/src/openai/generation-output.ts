import { bytesElementToString, type BytesElement, type InferResponse, type Tensor } from '@tritium/core';
import { LLM_TENSORS } from './generation-model.js';

/** One response of a generation: its text (a delta when streaming) and what else the model sent with it. */
export interface GenerationOutput {
  readonly text: string;
  readonly inputTokens: number | undefined;
  readonly outputTokens: number | undefined;
  /** vLLM's logprobs: per token, the candidates by token id, each `{logprob, rank, decoded_token}`. */
  readonly logprobs: VllmLogprobs | undefined;
  readonly finishReason: string | undefined;
}

export type VllmLogprobs = ReadonlyArray<Readonly<Record<string, { readonly logprob: number; readonly rank?: number; readonly decoded_token: string }>> | null>;

export function generationOutput(response: InferResponse): GenerationOutput {
  const { outputs } = response;
  const logprobs = text(outputs[LLM_TENSORS.logprobs]);
  const finishReason = text(outputs[LLM_TENSORS.finishReason]);
  return {
    text: text(outputs[LLM_TENSORS.text]) ?? '',
    inputTokens: count(outputs[LLM_TENSORS.inputTokens]),
    outputTokens: count(outputs[LLM_TENSORS.outputTokens]),
    logprobs: logprobs === undefined || logprobs === 'null' ? undefined : (JSON.parse(logprobs) as VllmLogprobs),
    // vLLM sends its finish reason with every response: Python's None (as "None") until the last.
    finishReason: finishReason === 'None' || finishReason === '' ? undefined : finishReason,
  };
}

/** A BYTES output's one element as text (several, joined: a batching model may answer [1, 1]). */
function text(tensor: Tensor | undefined): string | undefined {
  if (tensor === undefined || tensor.datatype !== 'BYTES') return undefined;
  return (tensor.data as readonly BytesElement[]).map(bytesElementToString).join('');
}

function count(tensor: Tensor | undefined): number | undefined {
  const value = tensor?.data[0];
  return typeof value === 'number' ? value : typeof value === 'bigint' ? Number(value) : undefined;
}
