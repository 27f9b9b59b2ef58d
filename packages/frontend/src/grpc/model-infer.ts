import type { ServerUnaryCall } from '@grpc/grpc-js';
import { InferenceError, type RunningInference } from '@tritium/core';
import { deliverOutputs } from '../requested-outputs.js';
import { decodeInferRequest, type DecodedInferRequest, type InferRequestMessage } from './infer-request.js';
import { encodeInferResponse, type InferResponseMessage } from './infer-response.js';
import type { ServingContext } from './serving-context.js';
import type { InferParameter } from './wire-parameters.js';

/** The ModelInfer RPC: one request, one response; a client that goes away cancels its request. */
export async function modelInfer(context: ServingContext, call: ServerUnaryCall<InferRequestMessage, InferResponseMessage>): Promise<InferResponseMessage> {
  const decoded = decodeInferRequest(call.request, context.memory);
  if (await context.decoupled.isDecoupled(decoded.model)) {
    throw new InferenceError('UNSUPPORTED', `ModelInfer RPC doesn't support models with decoupled transaction policy (model '${decoded.model}'): use ModelStreamInfer`);
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
export async function inferOnce(
  context: ServingContext,
  decoded: DecodedInferRequest,
  started: (running: RunningInference) => void,
  parameters?: Record<string, InferParameter>,
): Promise<InferResponseMessage> {
  const running = context.server.startInference(decoded.model, decoded.request);
  started(running);
  const response = await running.response;
  return encodeInferResponse(response, await deliverOutputs(context.server, response, decoded.outputs, context.memory), parameters);
}
