import type { InferenceServer, ModelFacts, TensorInput } from '@tritium/core';
import { LLM_TENSORS } from './generation-model.js';
import { generationOutput } from './generation-output.js';
import type { CatalogModel, ModelCatalog } from './model-catalog.js';
import { OpenAIError, unsupportedField } from './openai-error.js';

/** What /v1/embeddings is asked to embed: texts, or texts already tokenized. */
export type EmbeddingInputs = { readonly kind: 'text'; readonly texts: readonly string[] } | { readonly kind: 'tokens'; readonly ids: readonly (readonly number[])[] };

export interface Embeddings {
  readonly vectors: readonly (readonly number[])[];
  /** The tokens embedded, all inputs together; undefined when the model does not say. */
  readonly promptTokens: number | undefined;
}

export interface EmbeddingModel {
  embed(inputs: EmbeddingInputs, dimensions: number | undefined, signal: AbortSignal): Promise<Embeddings>;
}

/** The inputs of Triton's vLLM embedding models, and of token-id models (BERT-like, as exported to ONNX). */
const EMBEDDING_REQUEST = 'embedding_request';
const INPUT_IDS = 'input_ids';
const ATTENTION_MASK = 'attention_mask';
const TOKEN_TYPE_IDS = 'token_type_ids';
/** The config parameter naming the output that holds the embeddings, where a token-id model has several. */
export const EMBEDDING_OUTPUT_PARAMETER = 'embedding_output';

/**
 * The way `model` embeds, by its inputs: an `embedding_request` input (Triton's vLLM
 * convention: a JSON request in, the vector as JSON on `text_output`), or an `input_ids`
 * input (its own tokenizer.json turns texts into ids; the vectors are its FP32 output).
 */
export function embeddingModelOf(server: InferenceServer, catalog: ModelCatalog, model: CatalogModel): EmbeddingModel {
  const inputs = model.facts.inputs;
  if (inputs.some((input) => input.name === EMBEDDING_REQUEST)) return new JsonEmbeddingModel(server, model);
  const ids = inputs.find((input) => input.name === INPUT_IDS);
  if (ids) return new TokenEmbeddingModel(server, catalog, model, ids);
  throw new OpenAIError(400, `model '${model.facts.name}' is not an embedding model: it has neither an '${EMBEDDING_REQUEST}' nor an '${INPUT_IDS}' input (docs/openai.md)`, {
    param: 'model',
    code: 'model_not_supported',
  });
}

/** Triton's vLLM embedding convention: one inference per text, `{input, pooling_params}` in, a JSON vector out. */
class JsonEmbeddingModel implements EmbeddingModel {
  constructor(
    private readonly server: InferenceServer,
    private readonly model: CatalogModel,
  ) {}

  async embed(inputs: EmbeddingInputs, dimensions: number | undefined, signal: AbortSignal): Promise<Embeddings> {
    if (inputs.kind !== 'text') throw unsupportedField('input', `model '${this.model.facts.name}' embeds text, not token ids`);
    const { name, maxBatchSize } = this.model.facts;
    const shape = maxBatchSize > 0 ? [1, 1] : [1];
    const returnInputTokens = `return_${LLM_TENSORS.inputTokens}`;
    const countsTokens = this.model.facts.inputs.some((i) => i.name === returnInputTokens) && this.model.facts.outputs.some((o) => o.name === LLM_TENSORS.inputTokens);
    const outputs: string[] = countsTokens ? [LLM_TENSORS.text, LLM_TENSORS.inputTokens] : [LLM_TENSORS.text];
    const answers = await Promise.all(
      inputs.texts.map(async (text) => {
        const request: Record<string, TensorInput> = {
          // As Triton's frontend sends it: the dimensions, if any, as a list.
          [EMBEDDING_REQUEST]: { datatype: 'BYTES', shape, data: [JSON.stringify({ input: text, pooling_params: dimensions === undefined ? {} : { dimensions: [dimensions] } })] },
        };
        if (countsTokens) request[returnInputTokens] = { datatype: 'BOOL', shape, data: [true] };
        const output = generationOutput(await this.server.infer(name, { inputs: request, outputs, signal }));
        return { vector: vectorOf(name, JSON.parse(output.text) as unknown), tokens: output.inputTokens };
      }),
    );
    const counted = answers.every(({ tokens }) => tokens !== undefined);
    return { vectors: answers.map(({ vector }) => vector), promptTokens: counted ? answers.reduce((sum, { tokens }) => sum + tokens!, 0) : undefined };
  }
}

function vectorOf(model: string, value: unknown): number[] {
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'number')) {
    throw new OpenAIError(500, `model '${model}' answered an embedding that is not a list of numbers`);
  }
  return value as number[];
}

/**
 * A model of token ids: texts tokenized with its tokenizer, padded into one batch (as many
 * rows as the model batches at once) with an attention mask, and each row's vector read
 * from its FP32 output of shape [batch, dim].
 */
class TokenEmbeddingModel implements EmbeddingModel {
  constructor(
    private readonly server: InferenceServer,
    private readonly catalog: ModelCatalog,
    private readonly model: CatalogModel,
    private readonly idsInput: ModelFacts['inputs'][number],
  ) {}

  async embed(inputs: EmbeddingInputs, dimensions: number | undefined, signal: AbortSignal): Promise<Embeddings> {
    if (dimensions !== undefined) throw unsupportedField('dimensions', `model '${this.model.facts.name}' gives vectors of one size: 'dimensions' is not supported`);
    const rows = inputs.kind === 'tokens' ? inputs.ids : await this.tokenize(inputs.texts);
    const { maxBatchSize } = this.model.facts;
    const batchSize = maxBatchSize > 0 ? maxBatchSize : rows.length;
    const vectors: number[][] = [];
    for (let start = 0; start < rows.length; start += batchSize) vectors.push(...(await this.embedBatch(rows.slice(start, start + batchSize), signal)));
    return { vectors, promptTokens: rows.reduce((sum, row) => sum + row.length, 0) };
  }

  private async tokenize(texts: readonly string[]): Promise<number[][]> {
    const tokenizer = await this.catalog.tokenizer(this.model);
    return texts.map((text) => tokenizer.encode(text).ids);
  }

  private async embedBatch(rows: readonly (readonly number[])[], signal: AbortSignal): Promise<number[][]> {
    const { name, inputs: modelInputs } = this.model.facts;
    const length = Math.max(...rows.map((row) => row.length));
    const datatype = this.idsInput.data_type === 'TYPE_INT32' ? 'INT32' : 'INT64';
    // Padding with 0, masked out: the mask, not the pad id, tells the model where each row ends.
    const tensor = (value: (row: readonly number[], at: number) => number): TensorInput => {
      const values = rows.flatMap((row) => Array.from({ length }, (_, at) => (at < row.length ? value(row, at) : 0)));
      return { datatype, shape: [rows.length, length], data: datatype === 'INT32' ? values : values.map(BigInt) };
    };
    const request: Record<string, TensorInput> = { [INPUT_IDS]: tensor((row, at) => row[at]!) };
    const has = (input: string) => modelInputs.some((i) => i.name === input);
    if (has(ATTENTION_MASK)) request[ATTENTION_MASK] = tensor(() => 1);
    if (has(TOKEN_TYPE_IDS)) request[TOKEN_TYPE_IDS] = tensor(() => 0);
    const outputName = this.outputName();
    const response = await this.server.infer(name, { inputs: request, outputs: [outputName], signal });
    const output = response.outputs[outputName]!;
    if (output.datatype !== 'FP32' || output.shape.length !== 2 || output.shape[0] !== rows.length) {
      throw new OpenAIError(500, `model '${name}' output '${outputName}' is ${output.datatype} [${output.shape}]: an embedding output must be FP32 [batch, dim], one vector per input`);
    }
    const dim = output.shape[1]!;
    const data = output.data as Float32Array;
    return rows.map((_, row) => Array.from(data.subarray(row * dim, (row + 1) * dim)));
  }

  /** The output named by the `embedding_output` parameter, or the model's only FP32 output. */
  private outputName(): string {
    const { facts, parameters } = this.model;
    const named = parameters[EMBEDDING_OUTPUT_PARAMETER];
    if (named !== undefined) return named;
    const fp32 = facts.outputs.filter((output) => output.data_type === 'TYPE_FP32');
    if (fp32.length !== 1) {
      throw new OpenAIError(400, `model '${facts.name}' has ${fp32.length} FP32 outputs: name its embedding output with the '${EMBEDDING_OUTPUT_PARAMETER}' parameter`, { param: 'model' });
    }
    return fp32[0]!.name;
  }
}
