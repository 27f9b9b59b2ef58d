import type { Readable, Writable } from 'node:stream';

/** One control message: a JSON object whose `t` names it (see PROTOCOL.md). */
export type Frame = { t: string } & Record<string, unknown>;

const HEADER_BYTES = 4;

/**
 * The stub's control channel: frames of a 4-byte little-endian length and UTF-8 JSON,
 * written to one pipe and read from another. Tensor bytes never travel here.
 */
export class FrameChannel {
  private pending: Buffer | undefined;
  private broken = false;

  constructor(
    private readonly output: Writable,
    input: Readable,
    onFrame: (frame: Frame) => void,
    onMalformed: (error: Error) => void,
  ) {
    input.on('data', (chunk: Buffer) => {
      if (this.broken) return;
      let buffer = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
      while (buffer.length >= HEADER_BYTES) {
        const length = buffer.readUInt32LE(0);
        if (buffer.length < HEADER_BYTES + length) break;
        let frame: Frame;
        try {
          frame = JSON.parse(buffer.toString('utf8', HEADER_BYTES, HEADER_BYTES + length)) as Frame;
          if (typeof frame !== 'object' || frame === null || typeof frame.t !== 'string') throw new Error('a frame must be an object with a string "t"');
        } catch (error) {
          // The stream cannot be trusted past a bad frame.
          this.broken = true;
          onMalformed(error as Error);
          return;
        }
        buffer = buffer.subarray(HEADER_BYTES + length);
        onFrame(frame);
      }
      this.pending = buffer.length > 0 ? buffer : undefined;
    });
  }

  send(frame: Frame): void {
    const body = JSON.stringify(frame);
    const bytes = Buffer.allocUnsafe(HEADER_BYTES + Buffer.byteLength(body));
    bytes.writeUInt32LE(bytes.length - HEADER_BYTES, 0);
    bytes.write(body, HEADER_BYTES, 'utf8');
    this.output.write(bytes);
  }

  /** Ends the stream to the stub: it reads end of file and exits. */
  close(): void {
    this.output.end();
  }
}
