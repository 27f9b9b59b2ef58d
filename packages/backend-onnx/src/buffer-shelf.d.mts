/** See buffer-shelf.mjs. */
export declare class BufferShelf<B extends ArrayBufferLike> {
  constructor(make: (size: number) => B, smallest?: number);
  /** A buffer of at least `bytes`. */
  take(bytes: number): B;
  /** Gives a buffer back once nothing reads it any more; a transferred (detached) one is skipped. */
  give(buffer: B): void;
}
