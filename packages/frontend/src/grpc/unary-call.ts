import type { handleUnaryCall, ServerUnaryCall } from '@grpc/grpc-js';
import { grpcError } from './grpc-status.js';

/** A unary handler from a function that returns (or resolves to) the response; what it throws ends the call with its status. */
export function unary<Request, Response>(handle: (call: ServerUnaryCall<Request, Response>) => Response | Promise<Response>): handleUnaryCall<Request, Response> {
  return (call, callback) => {
    new Promise<Response>((resolve) => resolve(handle(call))).then(
      (response) => callback(null, response),
      (error: unknown) => callback(grpcError(error)),
    );
  };
}
