import type { handleUnaryCall, ServerUnaryCall } from '@grpc/grpc-js';
import { grpcError } from './grpc-status.js';

/**
 * A unary handler from a function that returns (or resolves to) the response; what it
 * throws ends the call with its status. A response known at once is sent at once, with
 * no promise between.
 */
export function unary<Request, Response>(handle: (call: ServerUnaryCall<Request, Response>) => Response | Promise<Response>): handleUnaryCall<Request, Response> {
  return (call, callback) => {
    let answer: Response | Promise<Response>;
    try {
      answer = handle(call);
    } catch (error) {
      return callback(grpcError(error));
    }
    if (answer instanceof Promise) {
      answer.then(
        (response) => callback(null, response),
        (error: unknown) => callback(grpcError(error)),
      );
    } else {
      callback(null, answer);
    }
  };
}
