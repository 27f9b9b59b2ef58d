import { BufferShelf } from './buffer-shelf.mjs';

/**
 * Inputs this large cross to a pool thread through a SharedArrayBuffer: one copy here and
 * one there (onnxruntime-node refuses SharedArrayBuffer-backed tensors, "Invalid argument",
 * so the thread copies into a buffer of its own), which beats a structured clone from
 * 16 KB up: round trips of 25 against 32 µs at 16 KB, 85 against 215 µs at 256 KB,
 * 1.0 against 3.1 ms at 4 MB on the 2-core machine. Below it a clone costs the same.
 * Both buffers are reused, so the two copies touch no fresh memory: a 64 MB input
 * crosses in ~15 ms, where one copy into a new buffer to transfer takes ~50 ms.
 */
export const SHARED_FROM_BYTES = 16 * 1024;

/** SharedArrayBuffers for inputs, reused run after run (pool-thread.mjs keeps its own copies' buffers the same way). */
export const sharedBuffers = (): BufferShelf<SharedArrayBuffer> => new BufferShelf((size) => new SharedArrayBuffer(size), SHARED_FROM_BYTES);
