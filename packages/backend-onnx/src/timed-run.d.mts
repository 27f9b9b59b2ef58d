/** A run's own time in µs, without onnxruntime-node's setImmediate hop (see timed-run.mjs). */
export function timedRun<T>(run: () => Promise<T>): Promise<{ results: T; micros: number }>;
