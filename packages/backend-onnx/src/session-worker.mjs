// One onnxruntime session on its own worker thread (see worker-session.ts, which
// starts it). Plain JavaScript so that it runs unbuilt from src/ and as shipped in dist/.
// workerData: { runtime: package name, model: path or bytes, options, externalData?, wasm? }.
// Posts { type: 'ready', inputMetadata, outputMetadata, openMilliseconds } or
// { type: 'failed', message }, then answers each { id, feeds, fetches } with
// { id, outputs, micros } or { id, error }, one run at a time (onnxruntime-web fails
// on overlapping runs; onnxruntime-node's run blocks this thread anyway).
// It repeats InlineSession.run's tensor building and timing: it must stay plain JavaScript.
import { parentPort, workerData } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';

const { runtime, model, options, externalData, wasm } = workerData;

async function open() {
  const module = await import(runtime);
  const ort = module.InferenceSession ? module : module.default;
  if (wasm?.paths !== undefined) ort.env.wasm.wasmPaths = wasm.paths;
  if (wasm?.numThreads !== undefined) ort.env.wasm.numThreads = wasm.numThreads;
  const start = performance.now();
  const session = await ort.InferenceSession.create(model, externalData ? { ...options, externalData } : options);
  return { ort, session, openMilliseconds: performance.now() - start };
}

function messageOf(error) {
  return error instanceof Error ? error.message : String(error);
}

let opened;
try {
  opened = await open();
} catch (error) {
  parentPort.postMessage({ type: 'failed', message: messageOf(error) });
}

if (opened) {
  const { ort, session, openMilliseconds } = opened;
  async function run({ id, feeds, fetches }) {
    try {
      const tensors = {};
      for (const name in feeds) {
        const feed = feeds[name];
        tensors[name] = new ort.Tensor(feed.type, feed.data, feed.dims);
      }
      const start = performance.now();
      const results = await session.run(tensors, fetches);
      const micros = (performance.now() - start) * 1000;
      const outputs = {};
      const buffers = new Set();
      for (const name in results) {
        const { type, data, dims } = results[name];
        outputs[name] = { type, data, dims };
        if (ArrayBuffer.isView(data)) buffers.add(data.buffer);
      }
      try {
        // The outputs are this thread's own: hand their memory over instead of copying it.
        parentPort.postMessage({ id, outputs, micros }, [...buffers]);
      } catch {
        parentPort.postMessage({ id, outputs, micros });
      }
    } catch (error) {
      parentPort.postMessage({ id, error: messageOf(error) });
    }
  }
  let queue = Promise.resolve();
  parentPort.on('message', (request) => {
    queue = queue.then(() => run(request));
  });
  parentPort.on('messageerror', (error) => {
    throw new Error(`a request could not be read: ${messageOf(error)}`);
  });
  parentPort.postMessage({ type: 'ready', inputMetadata: session.inputMetadata, outputMetadata: session.outputMetadata, openMilliseconds });
}
