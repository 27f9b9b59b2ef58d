import { availableParallelism } from 'node:os';
import { booleanParameter, integerParameter } from '@tritium/core/backend';
import type { ExecutionPool } from './execution-pool.js';
import type { BackendInstance, BackendModel, InstanceContext, ModelContext, NormalizedModelConfig } from '@tritium/core/backend';
import { resolveModelFile } from './model-file.js';
import { OnnxInstance } from './onnx-instance.js';
import type { LoadedModel } from './onnx-instance.js';
import type { OnnxSession } from './onnx-session.js';
import type { OrtSessionOptions, SelectedRuntime } from './runtime.js';
import { openSession, type SessionSpec } from './session.js';
import type { Placement } from './session-options.js';
import { sessionOptionsFor } from './session-options.js';
import { InlineLane } from './inline-lane.js';
import { SessionSlot, type SessionOpener } from './session-slot.js';
import { signatureOf } from './signature.js';
import { ThreadChoice } from './thread-choice.js';
import { validateConfigAgainstModel } from './validate.js';

export interface OnnxModelOptions {
  /** The default for the `share_session_between_instances` parameter. */
  readonly shareSessions: boolean;
  /** The backend's execution pool, which hosts the model's worker sessions. */
  readonly pool: ExecutionPool;
}

/** Tells loaded models apart in the pool, which places one model's sessions on different threads and lets them stand in for each other. */
let loads = 0;

/**
 * One loaded ONNX model version. Loading opens a first session (on the execution pool
 * unless the model is set inline), which proves the file loads and lets the config be
 * checked against the model; the first instance then runs on it. Each instance has a
 * session of its own (Triton's default), or, with `share_session_between_instances`,
 * instances on one placement share one.
 */
export class OnnxModel implements BackendModel {
  /** The runtime and sessions, fixed at load. */
  private readonly summary: string;
  private readonly slots: SessionSlot[] = [];
  /** Shared slots by placement, kept as promises so instances created at once share the first. */
  private readonly shared = new Map<string, Promise<SessionSlot>>();
  /** The inline lanes of "auto", by placement. */
  private readonly lanes = new Map<string, InlineLane>();
  private spare: { key: string; session: OnnxSession } | undefined;

  private constructor(
    private readonly loaded: LoadedModel,
    private readonly modelFile: string,
    private readonly share: boolean,
    private readonly choice: ThreadChoice,
    private readonly pool: ExecutionPool,
    private readonly group: string,
    /** The server's count of the version's requests in flight, which "auto" reads. */
    private readonly requestsInFlight: () => number,
    first: { key: string; session: OnnxSession },
    fallbackReason: string | undefined,
  ) {
    this.spare = first;
    const parts = [loaded.runtime.label];
    if (fallbackReason) parts.push(`in place of onnxruntime-node (${fallbackReason})`);
    parts.push(share ? 'one session shared by all instances' : 'one session per instance');
    this.summary = parts.join('; ');
  }

  /** Which runtime serves the model, and where its runs happen and why (the thread choice's reason, which changes once "auto" decides). */
  get description(): string {
    return `${this.summary}; ${this.choice.reason}`;
  }

  static async load(context: ModelContext, selected: SelectedRuntime, options: OnnxModelOptions): Promise<OnnxModel> {
    const { config } = context;
    const { runtime } = selected;
    const share = booleanParameter(config, 'share_session_between_instances') ?? options.shareSessions;
    const { pool } = options;
    const group = `${context.name}#${++loads}`;
    // "auto" decides after the first runs: the server's log says where the model went and why.
    const choice = ThreadChoice.fromConfig(config, (reason) => context.logger.info(`model '${context.name}': ${reason}`), widenTo(config, selected, pool));
    // Every instance group's session options are built now, so an accelerator that
    // cannot be had fails the load rather than the first instance.
    const placements = placementsOf(config);
    for (const placement of placements) sessionOptionsFor(config, runtime, placement, pool.intraOpThreads);

    const modelFile = await resolveModelFile(context.modelPath, context.name);
    const firstPlacement = placements[0]!;
    const spec = { runtime, modelFile, modelName: context.name, options: sessionOptionsFor(config, runtime, firstPlacement, pool.intraOpThreads), pool, group: `${group}:${keyOf(firstPlacement)}` };
    const session = await openSession(spec, choice.thread);
    try {
      const signature = signatureOf(session.metadata, context.name);
      validateConfigAgainstModel(config, signature);
      const scalarOutputs = new Set(signature.outputs.filter((o) => o.dims.length === 0).map((o) => o.name));
      const loaded: LoadedModel = { name: context.name, config, runtime, scalarOutputs };
      return new OnnxModel(loaded, modelFile, share, choice, pool, group, () => context.requestsInFlight(), { key: keyOf(firstPlacement), session }, selected.fallbackReason);
    } catch (error) {
      await session.release();
      throw error;
    }
  }

  async createInstance(instance: InstanceContext): Promise<BackendInstance> {
    const placement: Placement = { kind: instance.kind, deviceId: instance.deviceId };
    const key = keyOf(placement);
    let slot: Promise<SessionSlot> | undefined = this.share ? this.shared.get(key) : undefined;
    if (!slot) {
      slot = this.openSlot(placement, key);
      if (this.share) {
        this.shared.set(key, slot);
        // A failed open is reported to this instance, and retried by the next one.
        slot.catch(() => this.shared.delete(key));
      }
    }
    const opened = await slot;
    opened.use(instance.health);
    return new OnnxInstance(this.loaded, opened, !this.share);
  }

  async finalize(): Promise<void> {
    // Slots that instances owned were released by them already; release() is idempotent.
    await Promise.all([...this.slots.map((slot) => slot.release()), this.spare?.session.release()]);
    await Promise.all([...this.lanes.values()].map((lane) => lane.release()));
    this.spare = undefined;
  }

  /** The placement's inline lane, under "auto"; one for all its instances. */
  private laneFor(key: string, spec: SessionSpec): InlineLane | undefined {
    if (this.choice.requested !== 'auto') return undefined;
    let lane = this.lanes.get(key);
    if (!lane) this.lanes.set(key, (lane = new InlineLane(spec, this.choice)));
    return lane;
  }

  private async openSlot(placement: Placement, key: string): Promise<SessionSlot> {
    const { config, runtime, name } = this.loaded;
    const options = sessionOptionsFor(config, runtime, placement, this.pool.intraOpThreads);
    // Sessions of one placement have the same options, so they may stand in for each other (pool-session.ts).
    const spec = { runtime, modelFile: this.modelFile, modelName: name, options, pool: this.pool, group: `${this.group}:${key}` };
    const open: SessionOpener = (thread, intraOpThreads) => openSession(intraOpThreads === undefined ? spec : { ...spec, options: widened(options, intraOpThreads) }, thread);
    let first: OnnxSession;
    // The first session opened before the choice could widen anything.
    let firstWidth: number | undefined;
    if (this.spare?.key === key) {
      first = this.spare.session;
      this.spare = undefined;
    } else {
      firstWidth = this.choice.intraOpThreads;
      first = await open(this.choice.thread, firstWidth);
    }
    const slot = new SessionSlot(first, firstWidth, open, this.choice, `model '${name}'`, this.requestsInFlight, this.laneFor(key, spec));
    this.slots.push(slot);
    return slot;
  }
}

/**
 * The intra-op threads "auto" may widen the model's pooled sessions to: the cores, for
 * onnxruntime-node when the config sets no count of its own and the pool gives each
 * session fewer.
 */
function widenTo(config: NormalizedModelConfig, selected: SelectedRuntime, pool: ExecutionPool): number | undefined {
  const cores = availableParallelism();
  if (selected.runtime.kind !== 'node' || integerParameter(config, 'intra_op_thread_count') || pool.intraOpThreads >= cores) return undefined;
  return cores;
}

/**
 * Options with `threads` intra-op threads that sleep between runs: spinning ones
 * (onnxruntime's default) burn the cores that other sessions' runs need.
 */
function widened(options: OrtSessionOptions, threads: number): OrtSessionOptions {
  // sessionOptionsFor puts the config's `session.*` entries there; they win.
  const extra = options.extra as { session?: Record<string, string> } | undefined;
  const session = { 'intra_op.allow_spinning': '0', ...extra?.session };
  return { ...options, intraOpNumThreads: threads, extra: { ...extra, session } };
}

/** The distinct placements the config's instance groups ask for; CPU when there are none. */
function placementsOf(config: NormalizedModelConfig): Placement[] {
  const placements: Placement[] = [];
  const seen = new Set<string>();
  for (const group of config.instance_group) {
    const devices = group.kind === 'KIND_GPU' ? (group.gpus.length > 0 ? group.gpus : [0]) : [undefined];
    for (const deviceId of devices) {
      const placement: Placement = { kind: group.kind, deviceId };
      const key = keyOf(placement);
      if (!seen.has(key)) {
        seen.add(key);
        placements.push(placement);
      }
    }
  }
  return placements.length > 0 ? placements : [{ kind: 'KIND_CPU' }];
}

function keyOf(placement: Placement): string {
  return placement.kind === 'KIND_GPU' ? `gpu:${placement.deviceId ?? 0}` : 'cpu';
}
