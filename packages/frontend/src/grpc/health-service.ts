import type { ServerWritableStream, UntypedServiceImplementation } from '@grpc/grpc-js';
import type { InferenceServer } from '@tritium/core';
import { unary } from './unary-call.js';

type ServingStatus = 'SERVING' | 'NOT_SERVING';
type Watcher = ServerWritableStream<unknown, { status: ServingStatus }>;

/**
 * gRPC's health service (grpc.health.v1.Health) as Triton answers Check: SERVING while
 * the server is ready, whatever service is named. Watch sends the status at once and again
 * each time it changes; readiness changes only with a model's state or when the server
 * starts stopping, so those are when it is read again.
 */
export class HealthService {
  private readonly watchers = new Map<Watcher, ServingStatus>();
  private readonly recheck = () => this.sendChanges();

  constructor(private readonly server: InferenceServer) {}

  implementation(): UntypedServiceImplementation {
    return {
      Check: unary(() => ({ status: this.status() })),
      Watch: (call: Watcher) => this.watch(call),
    };
  }

  /** The frontend closes: each Watch hears NOT_SERVING and ends, so that closing does not wait for them. */
  close(): void {
    for (const [call, sent] of this.watchers) {
      if (sent !== 'NOT_SERVING') call.write({ status: 'NOT_SERVING' });
      call.end();
    }
    this.watchers.clear();
    this.unlisten();
  }

  private status(): ServingStatus {
    return this.server.isReady() ? 'SERVING' : 'NOT_SERVING';
  }

  private watch(call: Watcher): void {
    if (this.watchers.size === 0) {
      this.server.on('modelStateChanged', this.recheck);
      this.server.on('stopping', this.recheck);
    }
    const status = this.status();
    this.watchers.set(call, status);
    call.write({ status });
    call.on('cancelled', () => this.forget(call));
    call.on('close', () => this.forget(call));
  }

  private forget(call: Watcher): void {
    if (this.watchers.delete(call) && this.watchers.size === 0) this.unlisten();
  }

  private unlisten(): void {
    this.server.off('modelStateChanged', this.recheck);
    this.server.off('stopping', this.recheck);
  }

  private sendChanges(): void {
    const status = this.status();
    for (const [call, sent] of this.watchers) {
      if (sent === status) continue;
      this.watchers.set(call, status);
      call.write({ status });
    }
  }
}
