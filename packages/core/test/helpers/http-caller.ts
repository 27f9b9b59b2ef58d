import { CallerTrace, type InferenceServer, type Tensor } from '@tritium/core';

/**
 * One inference as an HTTP frontend makes it: its receive times stamped before the
 * request, its send times after the response. The caller trace comes back unended, for
 * the test to end when it chooses.
 */
export async function inferAsHttpFrontend(server: InferenceServer, model: string, inputs: Record<string, Tensor>): Promise<CallerTrace> {
  const trace = new CallerTrace({ endsAfterResponse: true });
  trace.stamp('HTTP_RECV_START');
  trace.stamp('HTTP_RECV_END');
  await server.infer(model, { inputs, trace });
  trace.stamp('HTTP_SEND_START');
  trace.stamp('HTTP_SEND_END');
  return trace;
}
