// One thread of the execution pool (see pool-thread.ts, which starts it): it hosts any
// number of onnxruntime sessions, of any models. Plain JavaScript so that it runs unbuilt
// from src/ and as shipped in dist/. workerData: { priority } only (see lowerPriority below);
// everything else comes in messages, each answered with the same id:
//   { op: 'open', id, runtime (package name), model (path or bytes), options, externalData?, wasm?,
//   }
//     -> { id, metadata: { inputMetadata, outputMetadata } } or { id, error };
//     the session is known by the open's id from then on.
//   { op: 'run', id, session, feeds, fetches } -> { id, outputs, micros, ranFrom, ranTo } or { id, error };
//     ranFrom/ranTo: when the run began and ended, in epoch milliseconds (performance.timeOrigin
//     + now: this thread's performance.now() counts from its own origin);
//     a feed is { type, data, dims }, or { type, dims, shared, byteLength, view }: its bytes in
//     a SharedArrayBuffer that the event loop reuses once answered (see shared-buffers.ts).
//   { op: 'release', session } (no answer)
//   { op: 'exit' } (no answer): the operations still queued fail, what is left is released and
//     the thread ends once the operation under way returns. The event loop never terminates a
//     thread from outside: a thread stopped inside onnxruntime-node's native code aborts the
//     whole process (node-addon-api rethrows the failed JavaScript exception as a C++ one).
// One operation at a time, in order: onnxruntime-node's run blocks this thread anyway, and
// onnxruntime-web fails on overlapping operations.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { BufferShelf } from './buffer-shelf.mjs';

/**
 * Gives this thread the nice value `priority`, before any session starts its intra-op
 * threads, which inherit it. Linux only: there a thread has a nice value of its own, set
 * through its thread id (the name /proc/thread-self links to); elsewhere setpriority()
 * takes a process id, and the thread keeps the process's priority.
 */
function lowerPriority(priority) {
  if (priority === undefined || process.platform !== 'linux') return;
  try {
    setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), priority);
  } catch {
    // No /proc, or a priority the process may not take: the thread keeps the process's.
  }
}
lowerPriority(workerData?.priority);

const runtimes = new Map();
const sessions = new Map();

// Buffers that shared inputs are copied into (onnxruntime-node refuses SharedArrayBuffer-
// backed tensors), reused as the event loop reuses its shared ones.
const scratch = new BufferShelf((size) => new ArrayBuffer(size));

function ownCopy({ type, dims, shared, byteLength, view }, taken) {
  const buffer = scratch.take(byteLength);
  taken.push(buffer);
  new Uint8Array(buffer, 0, byteLength).set(new Uint8Array(shared, 0, byteLength));
  const View = globalThis[view];
  return { type, dims, data: new View(buffer, 0, byteLength / View.BYTES_PER_ELEMENT) };
}

/**
 * Times a run as the model's own cost. onnxruntime-node starts a run from a setImmediate:
 * an immediate queued just before its own fires right before the run starts, so the
 * hop (and a woken thread's wait for it) is left out. When the run ends before that
 * immediate (onnxruntime-web), the whole call is its time.
 */
export async function timedRun(run) {
  const begin = performance.now();
  let start = begin;
  setImmediate(() => (start = performance.now()));
  const results = await run();
  const end = performance.now();
  const from = start <= end ? start : begin;
  return { results, micros: (end - from) * 1000, ranFrom: performance.timeOrigin + from, ranTo: performance.timeOrigin + end };
}

function messageOf(error) {
  return error instanceof Error ? error.message : String(error);
}

/** Each package once per thread; onnxruntime-web's settings are its module's, so this thread's copy repeats them. */
async function runtimeOf(name, wasm) {
  let ort = runtimes.get(name);
  if (!ort) {
    const module = await import(name);
    ort = module.InferenceSession ? module : module.default;
    if (wasm?.paths !== undefined) ort.env.wasm.wasmPaths = wasm.paths;
    if (wasm?.numThreads !== undefined) ort.env.wasm.numThreads = wasm.numThreads;
    runtimes.set(name, ort);
  }
  return ort;
}

async function open({ id, runtime, model, options, externalData, wasm }) {
  if (exiting) throw new Error('the thread is ending');
  const ort = await runtimeOf(runtime, wasm);
  const session = await ort.InferenceSession.create(model, externalData ? { ...options, externalData } : options);
  sessions.set(id, { ort, session });
  parentPort.postMessage({ id, metadata: { inputMetadata: session.inputMetadata, outputMetadata: session.outputMetadata } });
}

async function run({ id, session: key, feeds, fetches }) {
  const taken = [];
  try {
    await runWith(id, sessions.get(key), feeds, fetches, taken);
  } finally {
    // After the answer went: an output that was one of these buffers left transferred (the shelf skips it).
    for (const buffer of taken) scratch.give(buffer);
  }
}

async function runWith(id, hosted, feeds, fetches, taken) {
  if (!hosted || exiting) throw new Error('the session was released');
  const { ort, session } = hosted;
  const tensors = {};
  for (const name in feeds) {
    const feed = feeds[name].shared ? ownCopy(feeds[name], taken) : feeds[name];
    tensors[name] = new ort.Tensor(feed.type, feed.data, feed.dims);
  }
  const { results, micros, ranFrom, ranTo } = await timedRun(() => session.run(tensors, fetches));
  const outputs = {};
  const buffers = new Set();
  for (const name in results) {
    const { type, data, dims } = results[name];
    outputs[name] = { type, data, dims };
    if (ArrayBuffer.isView(data)) buffers.add(data.buffer);
  }
  try {
    // The outputs are this thread's own: hand their memory over instead of copying it.
    parentPort.postMessage({ id, outputs, micros, ranFrom, ranTo }, [...buffers]);
  } catch {
    parentPort.postMessage({ id, outputs, micros, ranFrom, ranTo });
  }
}

async function release({ session: key }) {
  const hosted = sessions.get(key);
  sessions.delete(key);
  await hosted?.session.release();
}

async function exit() {
  try {
    for (const key of [...sessions.keys()]) await release({ session: key }).catch(() => {});
  } finally {
    // Always: the event loop holds the process until this thread ends.
    process.exit(0);
  }
}

const operations = { open, run, release, exit };
let queue = Promise.resolve();
/** Set as soon as the exit arrives, between two operations, so that the ones queued before it fail at once. */
let exiting = false;
parentPort.on('message', (message) => {
  if (message.op === 'exit') exiting = true;
  queue = queue.then(() =>
    operations[message.op](message).catch((error) => {
      if (message.id !== undefined) parentPort.postMessage({ id: message.id, error: messageOf(error) });
    }),
  );
});
parentPort.on('messageerror', (error) => {
  throw new Error(`a request could not be read: ${messageOf(error)}`);
});
