import type { IncomingMessage, ServerResponse } from 'node:http';
import { elementCount, InferenceError, type CallerTrace, type InferRequest, type InferResponse, type ModelMetadata, type TensorInput } from '@tritium/core';
import { sendTraced } from '../request-tracing.js';
import { BytesElementBudget } from '../bytes-elements.js';
import { EMPTY_FINAL_RESPONSE, parameterOptions } from '../request-parameters.js';
import { describe, invalid, isJsonObject } from '../wire-values.js';
import type { Handler, HttpContext } from './http-context.js';
import { answerTraced } from './http-trace.js';
import { errorJson, statusOf } from './http-errors.js';
import { dataTypeOf } from './infer-request.js';
import { idMember } from './infer-response.js';
import { FlatTensorValues } from './flat-tensor-values.js';
import { jsonDataText, jsonTensorData } from './json-tensor-data.js';
import { requestBody } from './request-body.js';
import { parseJsonObject, type JsonObject } from './request-json.js';
import { sendJson } from './responses.js';
import { wrongJsonKind } from './triton-json.js';
import type { Route } from './routes.js';

/**
 * Triton's generate extension: `/generate` answers one flat JSON object, and
 * `/generate_stream` one server-sent event per response (any number, for a decoupled
 * model). The request's top-level keys (and those under `parameters`) that name model
 * inputs become tensors; the others are request parameters.
 */
export const generate: Handler<Extract<Route, { kind: 'model' }>> = (context, route, req, res) =>
  answerTraced(req, res, (trace) => answer(context, route, req, res, trace));

async function answer(
  { server, bodyLimitBytes, connections }: HttpContext,
  { model, version, action }: Extract<Route, { kind: 'model' }>,
  req: IncomingMessage,
  res: ServerResponse,
  trace: CallerTrace | undefined,
): Promise<void> {
  const body = await requestBody(req, bodyLimitBytes, 'json');
  trace?.stamp('HTTP_RECV_END');
  const metadata = await server.modelMetadata(model, version);
  const isInput = (key: string) => metadata.inputs.some((input) => input.name === key);
  const json = await parseJsonObject(body, 'generate request', {
    // An input's value is tensor data, read flat; any other array is a mistake, named as one.
    isTensorData: isInput,
    // Keys that name inputs become inputs, and Triton refuses a second of one (in words core gives it).
    duplicateKey: (key, { depth, parentKey }) => ((depth === 0 || (depth === 1 && parentKey === PARAMETERS)) && isInput(key) ? alreadyExists(key) : undefined),
  });
  const { request, emptyFinal } = await generateRequest(json, metadata, version);
  const abort = new AbortController();
  connections.cancelOnDisconnect(req, res, () => abort.abort());
  // A refusal throws here, before any response: an ordinary JSON error, on either endpoint.
  const responses = server.startStream(model, { ...request, signal: abort.signal, trace });
  if (action === 'generate') {
    const response = await onlyResponse(responses);
    trace?.stamp('INFER_RESPONSE_COMPLETE');
    sendTraced(trace, 'HTTP', () => sendJson(res, 200, generateResponseJson(response, request.id, undefined)));
  } else {
    // A stream that ends without a response still names the version a request without one is served by.
    const served = emptyFinal ? { modelName: model, modelVersion: version ?? Math.max(...metadata.versions.map(Number)) } : undefined;
    await streamEvents(res, responses, request.id, served, trace);
  }
}

async function generateRequest(json: JsonObject, metadata: ModelMetadata, modelVersion: number | undefined): Promise<{ request: InferRequest; emptyFinal: boolean }> {
  // No prototypes: a key named `__proto__` is an input or a parameter like any other.
  const inputs: Record<string, TensorInput> = Object.create(null);
  const parameters: Record<string, string | number | bigint | boolean> = Object.create(null);
  const bytesElements = new BytesElementBudget();
  let id: string | undefined;
  // `within`: Triton's words for where a parameter nested under a keyword is.
  const read = async (key: string, value: unknown, within: string) => {
    const input = metadata.inputs.find((i) => i.name === key);
    if (input) {
      if (Object.hasOwn(inputs, key)) throw alreadyExists(key);
      inputs[key] = await inputTensor(key, dataTypeOf(`input '${key}'`, input.datatype), input.shape, value, bytesElements);
    } else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') {
      parameters[key] = value;
    } else {
      throw invalid(`${within}parameter '${key}' has invalid type. It should be either 'int', 'bool', or 'string'.`);
    }
  };
  for (const [key, value] of Object.entries(json)) {
    if (key === 'id') {
      if (typeof value !== 'string') throw invalid(`the generate request's 'id' must be a string, got ${describe(value)}`);
      id = value;
    } else if (key === PARAMETERS) {
      if (!isJsonObject(value)) throw wrongJsonKind(`Expected JSON object for keyword: '${PARAMETERS}'`, 'object', `got ${describe(value)}`);
      for (const [name, parameter] of Object.entries(value)) await read(name, parameter, `Converting keyword: '${PARAMETERS}': `);
    } else {
      await read(key, value, '');
    }
  }
  const emptyFinal = parameters[EMPTY_FINAL_RESPONSE] ?? false;
  if (typeof emptyFinal !== 'boolean') throw invalid(`parameter '${EMPTY_FINAL_RESPONSE}' must be a boolean, got ${describe(emptyFinal)}`);
  return { request: { inputs, id, modelVersion, ...parameterOptions(parameters) }, emptyFinal };
}

/** The keyword whose members are read as the request's own (inputs or parameters). */
const PARAMETERS = 'parameters';

function alreadyExists(input: string): InferenceError {
  return invalid(`input '${input}' already exists in request`);
}

/** A scalar or a list as a tensor of the input's datatype, shaped as Triton shapes it. */
async function inputTensor(name: string, datatype: TensorInput['datatype'], shape: readonly number[], value: unknown, bytesElements: BytesElementBudget): Promise<TensorInput> {
  const data = await jsonTensorData(`input '${name}'`, datatype, value instanceof FlatTensorValues ? value : FlatTensorValues.of([value]));
  const fitted = fitShape(name, shape, data.length);
  bytesElements.take(name, datatype, fitted);
  return { datatype, shape: fitted, data };
}

/**
 * Fits `count` elements to the input's shape as Triton does for generate: the fixed
 * dimensions must divide the count, the innermost variable one (-1) takes what is
 * left, and any other variable one is 1.
 */
function fitShape(name: string, shape: readonly number[], count: number): number[] {
  const fitted = [...shape];
  let left = count;
  for (const dim of fitted) {
    if (dim === -1) continue;
    if (dim === 0 ? left !== 0 : left % dim !== 0) throw unfit(name, shape, count);
    left = dim === 0 ? 1 : left / dim;
  }
  for (let i = fitted.length - 1; i >= 0; i--) {
    if (fitted[i] !== -1) continue;
    fitted[i] = left;
    left = 1;
  }
  if (left !== 1 || elementCount(fitted) !== count) throw unfit(name, shape, count);
  return fitted;
}

function unfit(name: string, shape: readonly number[], count: number): InferenceError {
  return invalid(`The schema can not convert input '${name}' to tensor with proper shape: ${count} elements do not fit shape [${shape.join(',')}]`);
}

/** `/generate` takes exactly one response; a stream of another length belongs to `/generate_stream`. */
async function onlyResponse(responses: AsyncGenerator<InferResponse>): Promise<InferResponse> {
  let only: InferResponse | undefined;
  let count = 0;
  // Leaving the loop at a second response cancels the rest of the stream.
  for await (const response of responses) {
    only = response;
    if (++count > 1) break;
  }
  if (count !== 1) {
    throw new InferenceError(
      'INTERNAL',
      `generate expects model to produce exactly 1 response, got ${count === 0 ? 0 : 'more than 1'}; use generate_stream for models that send any number of responses`,
    );
  }
  return only!;
}

/**
 * One `data: {...}` event per response. An error from the model is an event
 * `data: {"error": ...}` too, as in Triton: after a response, under the 200 already
 * sent; as the first answer, with the error's own status. With `emptyFinal` (the
 * request's triton_enable_empty_final_response) each response says whether it is the
 * last, as the model sent it, and a stream the model ended without a last response (the
 * final flag alone) ends with an empty one that says it is.
 */
async function streamEvents(
  res: ServerResponse,
  responses: AsyncGenerator<InferResponse>,
  id: string | undefined,
  emptyFinal: Served | undefined,
  trace: CallerTrace | undefined,
): Promise<void> {
  let last: InferResponse | undefined;
  try {
    for await (const response of responses) {
      trace?.stamp('INFER_RESPONSE_COMPLETE');
      last = response;
      const event = `data: ${generateResponseJson(last, id, emptyFinal ? last.final === true : undefined)}\n\n`;
      // As Triton's, each response sent is between send activities of its own.
      sendTraced(trace, 'HTTP', () => {
        if (!res.headersSent) res.writeHead(200, EVENT_STREAM);
        res.write(event);
      });
    }
    if (!res.headersSent) res.writeHead(200, EVENT_STREAM);
    if (emptyFinal && !last?.final) res.write(`data: ${responseHead(last ?? emptyFinal, id)},"triton_final_response":true}\n\n`);
  } catch (error) {
    sendTraced(trace, 'HTTP', () => {
      if (!res.headersSent) res.writeHead(statusOf(error), EVENT_STREAM);
      res.write(`data: ${errorJson(error)}\n\n`);
    });
  }
  res.end();
}

const EVENT_STREAM = { 'content-type': 'text/event-stream; charset=utf-8' };

/** Which model version answered. */
type Served = Pick<InferResponse, 'modelName' | 'modelVersion'>;

/**
 * Triton's generate response: flat, each output by name, a one-element output as a bare
 * value; `final` (a stream's triton_final_response, when the client asked) after them.
 */
function generateResponseJson(response: InferResponse, id: string | undefined, final: boolean | undefined): string {
  let json = responseHead(response, id);
  for (const [name, tensor] of Object.entries(response.outputs)) {
    const data = jsonDataText(tensor);
    json += `,${JSON.stringify(name)}:${tensor.data.length === 1 ? data.slice(1, -1) : data}`;
  }
  return `${json}${final === undefined ? '' : `,"triton_final_response":${final}`}}`;
}

/** The response object up to its outputs. */
function responseHead({ modelName, modelVersion }: Served, id: string | undefined): string {
  return `{${idMember(id)}"model_name":${JSON.stringify(modelName)},"model_version":"${modelVersion}"`;
}
