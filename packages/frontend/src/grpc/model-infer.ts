import type { handleUnaryCall, ServerUnaryCall } from '@grpc/grpc-js';
import { InferenceError, type CallerTrace, type InferResponse, type RunningInference } from '@tritium/core';
import { sendTraced } from '../request-tracing.js';
import { grpcTrace } from './grpc-trace.js';
import { unary } from './unary-call.js';
import { isDecoupled } from '../decoupled-model.js';
import { deliverOutputs, plainOutputs } from '../requested-outputs.js';
import type { RequestRegions } from '../shared-memory/request-regions.js';
import { decodeInferRequest, type DecodedInferRequest, type InferRequestMessage } from './infer-request.js';
import { encodeInferResponse, type InferResponseMessage } from './infer-response.js';
import type { ServingContext } from './serving-context.js';
import type { InferParameter } from './wire-parameters.js';

/**
 * The ModelInfer RPC: one request, one response; a client that goes away cancels its
 * request. While requests are traced, the answer (or the error) is sent between
 * GRPC_SEND_START and GRPC_SEND_END, and the request's trace ends once it is.
 */
export function modelInferRpc(context: ServingContext): handleUnaryCall<InferRequestMessage, InferResponseMessage> {
  const untraced = unary<InferRequestMessage, InferResponseMessage>((call) => modelInfer(context, call, undefined));
  return (call, callback) => {
    const trace = grpcTrace(call.metadata, call.request);
    if (!trace) return untraced(call, callback);
    unary<InferRequestMessage, InferResponseMessage>((traced) => modelInfer(context, traced, trace))(call, (error, value) => {
      sendTraced(trace, 'GRPC', () => callback(error, value));
      trace.end();
    });
  };
}

function modelInfer(context: ServingContext, call: ServerUnaryCall<InferRequestMessage, InferResponseMessage>, trace: CallerTrace | undefined): Promise<InferResponseMessage> {
  const regions = context.memory.forRequest();
  return answerOnce(context, call, regions, trace).finally(() => regions.release());
}

/** ModelInfer's answer, its shared-memory regions held by the caller until the answer is written (or the request fails). */
async function answerOnce(
  context: ServingContext,
  call: ServerUnaryCall<InferRequestMessage, InferResponseMessage>,
  regions: RequestRegions,
  trace: CallerTrace | undefined,
): Promise<InferResponseMessage> {
  const decoded = decodeInferRequest(call.request, regions, trace);
  const { model, request } = decoded;
  if (isDecoupled(context.server, model, request.modelVersion)) {
    throw new InferenceError('UNSUPPORTED', `ModelInfer RPC doesn't support models with decoupled transaction policy (model '${model}'): use ModelStreamInfer`);
  }
  return inferOnce(context, decoded, (running) => {
    if (call.cancelled) running.cancel();
    else call.once('cancelled', () => running.cancel());
  });
}

/**
 * Runs a request on a model that answers once and encodes its response; `started` is
 * handed the running request, so that the caller can cancel it.
 */
export function inferOnce(
  context: ServingContext,
  decoded: DecodedInferRequest,
  started: (running: RunningInference) => void,
  parameters?: Record<string, InferParameter>,
): Promise<InferResponseMessage> {
  const running = context.server.startInference(decoded.model, decoded.request);
  started(running);
  return running.response.then((response) => {
    decoded.request.trace?.stamp('INFER_RESPONSE_COMPLETE');
    return encodeAnswer(context, decoded, response, parameters);
  });
}

/**
 * One response to `decoded` as the client asked for it. Only outputs that ask for
 * classification or shared memory need deliverOutputs (which may wait on the output's
 * labels); otherwise the response is encoded at once.
 */
export function encodeAnswer(
  context: ServingContext,
  decoded: DecodedInferRequest,
  response: InferResponse,
  parameters?: Record<string, InferParameter>,
): InferResponseMessage | Promise<InferResponseMessage> {
  if (decoded.outputs === undefined) {
    return encodeInferResponse(decoded.id, response, plainOutputs(response, undefined)!, parameters);
  }
  return deliverOutputs(context.server, response, decoded.outputs, decoded.regions).then((outputs) => encodeInferResponse(decoded.id, response, outputs, parameters));
}
