/** Where a frontend listens. */
export interface ListenOptions {
  /** Default '0.0.0.0' (every interface), as Triton. */
  readonly host?: string;
  /** 0 takes any free port. Each frontend has Triton's default (8000 HTTP, 8001 gRPC, 8002 metrics). */
  readonly port?: number;
}

/** A frontend that is listening. */
export interface RunningFrontend {
  readonly host: string;
  /** The bound port (the one chosen when 0 was asked for). */
  readonly port: number;
  /** Stops listening, ends open connections once their requests are answered, and resolves when all are closed. */
  close(): Promise<void>;
}
