import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { InferenceError } from '@tritium/core/backend';
import { Arena } from './arena.js';
import { FrameChannel, type Frame } from './frame-channel.js';
import { fromFrameError } from './frame-error.js';
import { PeerRegions } from './peer-regions.js';
import type { PythonEnvironment } from './python-environment.js';
import { removeRegions, sharedMemoryDirectory } from './shared-region.js';

/** Where the stub and triton_python_backend_utils live, beside src/ and dist/ alike. */
const PYTHON_DIRECTORY = fileURLToPath(new URL('../python/', import.meta.url));
const STUB_SCRIPT = `${PYTHON_DIRECTORY}tritium_stub.py`;

/** Region prefixes of stubs alive now, removed if Node exits without stopping them. */
const livePrefixes = new Set<string>();
process.once('exit', () => {
  for (const prefix of livePrefixes) removeRegions(sharedMemoryDirectory(), prefix);
});

export interface StubSpec {
  readonly environment: PythonEnvironment;
  readonly modelFile: string;
  /** Named in errors, e.g. "model 'add_sub' instance add_sub_0_0". */
  readonly label: string;
  /** How long importing numpy and the model may take before the start counts as failed. */
  readonly startTimeoutMs: number;
  readonly arenaSizes: ArenaSizes;
}

/** The sizes of both arenas' regions (Node's and the stub's), as Triton sizes its one shared-memory pool per stub. */
export interface ArenaSizes {
  /** The first region (Triton's shm-default-byte-size). */
  readonly firstBytes: number;
  /** How much a full arena's next region adds (Triton's shm-growth-byte-size); undefined: each region twice the last. */
  readonly growthBytes?: number;
}

/**
 * One Python stub process and what it shares with Node: the control channel (fd 3 to
 * the stub, fd 4 back), Node's arena for tensors it sends, and the stub's regions it
 * reads. Knows nothing of models: frames go to `onFrame`, a death to `onExit` once.
 */
export class StubProcess {
  readonly arena: Arena;
  readonly peers: PeerRegions;
  private readonly channel: FrameChannel;
  private readonly exitPromise: Promise<void>;
  private exitedWith: string | undefined;
  private stopping = false;
  private cleanedUp = false;
  private pendingFrees: number[] = [];
  /** Whether the stub's handles keep Node's event loop alive (a fresh child's do). */
  private busy = true;

  private constructor(
    private readonly child: ChildProcess,
    private readonly prefix: string,
    arenaSizes: ArenaSizes,
    onFrame: (frame: Frame) => void,
    onExit: (reason: string) => void,
  ) {
    const directory = sharedMemoryDirectory();
    this.arena = new Arena(directory, `${prefix}-n`, arenaSizes.firstBytes, arenaSizes.growthBytes);
    this.peers = new PeerRegions(directory);
    this.channel = new FrameChannel(child.stdio[3] as Writable, child.stdio[4] as Readable, onFrame, (error) =>
      this.kill(`sent a malformed frame (${error.message})`),
    );
    // The stub's output is the server's log, never an error's text: a client reads errors.
    child.stderr!.on('data', (chunk: Buffer) => process.stderr.write(chunk));
    // Writes to a stub that died fail with EPIPE; its exit is reported instead.
    (child.stdio[3] as Writable).on('error', () => {});
    this.exitPromise = new Promise((resolve) => {
      const exited = (why: string) => {
        if (this.cleanedUp) return;
        this.exitedWith ??= why;
        this.cleanUp();
        resolve();
        if (!this.stopping) onExit(this.describeExit());
      };
      child.once('exit', (code, signal) => exited(signal ? `was killed by ${signal}` : `exited with code ${code}`));
      // A process that never started emits 'error' and no 'exit'.
      child.once('error', (error) => {
        if (child.pid === undefined) exited(`could not be started (${error.message})`);
      });
    });
  }

  /** Starts a stub and waits for its hello (numpy and the model file imported); UNAVAILABLE with the reason when it cannot. */
  static async start(spec: StubSpec, onFrame: (frame: Frame) => void, onExit: (reason: string) => void): Promise<StubProcess> {
    const prefix = `tritium-${process.pid}-${randomBytes(6).toString('hex')}`;
    const { environment, arenaSizes } = spec;
    const args = [STUB_SCRIPT, '--model-file', spec.modelFile, '--shm-dir', sharedMemoryDirectory(), '--shm-prefix', prefix, '--shm-first-bytes', String(arenaSizes.firstBytes)];
    if (arenaSizes.growthBytes !== undefined) args.push('--shm-growth-bytes', String(arenaSizes.growthBytes));
    const child = spawn(environment.interpreter, args, {
      stdio: ['ignore', 'inherit', 'pipe', 'pipe', 'pipe'],
      env: {
        ...process.env,
        ...environment.env,
        PYTHONPATH: [PYTHON_DIRECTORY, process.env.PYTHONPATH].filter(Boolean).join(':'),
        PYTHONUNBUFFERED: '1',
      },
    });
    livePrefixes.add(prefix);
    let started = false;
    let announce: (frame: Frame) => void = () => {};
    const announced = new Promise<Frame>((resolve) => (announce = resolve));
    // Frames a model sends while importing (a module-level log line) wait for the caller's handler.
    const early: Frame[] = [];
    const stub = new StubProcess(
      child,
      prefix,
      arenaSizes,
      (frame) => (started ? onFrame(frame) : frame.t === 'hello' || frame.t === 'fatal' ? announce(frame) : early.push(frame)),
      (reason) => started && onExit(reason),
    );
    let timer: NodeJS.Timeout | undefined;
    const first = await Promise.race([
      announced,
      stub.exitPromise.then((): Frame => ({ t: 'exit' })),
      new Promise<Frame>((resolve) => (timer = setTimeout(() => resolve({ t: 'timeout' }), spec.startTimeoutMs))),
    ]);
    clearTimeout(timer);
    if (first.t === 'hello') {
      started = true;
      // After the caller's continuation has run, so that it can handle them.
      if (early.length > 0) setImmediate(() => early.forEach(onFrame));
      return stub;
    }
    const reason = first.t === 'fatal' ? fromFrameError(first.error, 'the stub').message : first.t === 'timeout' ? `it did not start within ${spec.startTimeoutMs} ms` : stub.describeExit();
    stub.kill(reason);
    await stub.exitPromise;
    throw new InferenceError('UNAVAILABLE', `${spec.label}: the Python stub (${environment.interpreter}, ${environment.origin}) could not start: ${reason}`);
  }

  get exited(): boolean {
    return this.exitedWith !== undefined;
  }

  send(frame: Frame): void {
    if (!this.exited) this.channel.send(frame);
  }

  /** Returns a lease of the stub's arena; the leases returned while one frame is handled go back in one `free` frame. */
  free(lease: number | null | undefined): void {
    if (lease == null) return;
    if (this.pendingFrees.push(lease) === 1) {
      queueMicrotask(() => {
        const leases = this.pendingFrees;
        this.pendingFrees = [];
        this.send({ t: 'free', leases });
      });
    }
  }

  /** Keeps Node's event loop alive only while work is in flight, so an idle stub does not hold the process open. */
  setBusy(busy: boolean): void {
    // Called around every batch: only a change touches the handles.
    if (busy === this.busy) return;
    this.busy = busy;
    const handles = [this.child, this.child.stdio[3], this.child.stdio[4], this.child.stderr] as Array<{ ref(): void; unref(): void } | null>;
    for (const handle of handles) {
      if (busy) handle?.ref();
      else handle?.unref();
    }
  }

  /** The stub is about to exit on purpose (it was asked to finalize): its exit is not a death to report. */
  expectExit(): void {
    this.stopping = true;
  }

  /** Ends the stub: closes its channel (it exits on end of file), then kills it if it has not gone after `graceMs`. */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    // Whoever awaits the stop keeps the process alive until the stub has gone.
    this.setBusy(true);
    this.channel.close();
    const timer = setTimeout(() => this.kill('did not exit in time'), graceMs);
    await this.exitPromise;
    clearTimeout(timer);
  }

  /** Kills the stub now (SIGKILL): used when it misbehaves or hangs. */
  kill(reason: string): void {
    if (this.exited) return;
    this.exitedWith ??= reason;
    this.child.kill('SIGKILL');
  }

  /** Resolves when the process has exited and its shared memory is removed. */
  whenExited(): Promise<void> {
    return this.exitPromise;
  }

  private describeExit(): string {
    return `the Python stub ${this.exitedWith} (its output is in the server's log)`;
  }

  private cleanUp(): void {
    this.cleanedUp = true;
    this.arena.close();
    this.peers.clear();
    removeRegions(sharedMemoryDirectory(), this.prefix);
    livePrefixes.delete(this.prefix);
  }
}

