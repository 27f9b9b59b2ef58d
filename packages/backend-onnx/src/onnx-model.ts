import type { BackendInstance, BackendModel, InstanceContext, ModelContext } from '@tritium/core';
import type { ConfigView } from './config.js';
import { booleanParameter, viewOf } from './config.js';
import { resolveModelFile } from './model-file.js';
import { OnnxInstance } from './onnx-instance.js';
import type { LoadedModel } from './onnx-instance.js';
import type { OrtSession, OrtSessionOptions, SelectedRuntime } from './runtime.js';
import { openSession, releaseSession } from './session.js';
import type { Placement } from './session-options.js';
import { sessionOptionsFor } from './session-options.js';
import { signatureOf } from './signature.js';
import { validateConfigAgainstModel } from './validate.js';

export interface OnnxModelOptions {
  /** The default for the `share_session_between_instances` parameter. */
  readonly shareSessions: boolean;
}

/**
 * One loaded ONNX model version. Loading opens a first session, which proves the
 * file loads and lets the config be checked against the model. Instances then use
 * one session per placement (CPU, or a GPU device) shared among them, or, with
 * `share_session_between_instances: "false"`, a session each.
 */
export class OnnxModel implements BackendModel {
  readonly description: string;
  private readonly shared = new Map<string, Promise<OrtSession>>();
  private spare?: { key: string; session: OrtSession };
  private readonly owned = new Set<OrtSession>();

  private constructor(
    private readonly loaded: LoadedModel,
    private readonly modelFile: string,
    private readonly share: boolean,
    first: { key: string; session: OrtSession },
    fallbackReason: string | undefined,
  ) {
    if (share) this.shared.set(first.key, Promise.resolve(first.session));
    else this.spare = first;
    this.owned.add(first.session);
    const parts = [loaded.runtime.label];
    if (fallbackReason) parts.push(`in place of onnxruntime-node (${fallbackReason})`);
    parts.push(share ? 'one session shared by all instances' : 'one session per instance');
    this.description = parts.join('; ');
  }

  static async load(context: ModelContext, selected: SelectedRuntime, options: OnnxModelOptions): Promise<OnnxModel> {
    const config = viewOf(context.config);
    const { runtime } = selected;
    const share = booleanParameter(config, 'share_session_between_instances', options.shareSessions);
    // Every instance group's session options are built now, so an accelerator that
    // cannot be had fails the load rather than the first instance.
    const placements = placementsOf(config);
    for (const placement of placements) sessionOptionsFor(config, runtime, placement);

    const modelFile = await resolveModelFile(context.modelPath, context.name);
    const firstPlacement = placements[0]!;
    const session = await openSession(runtime, modelFile, sessionOptionsFor(config, runtime, firstPlacement), context.name);
    try {
      const signature = signatureOf(session, context.name);
      validateConfigAgainstModel(config, signature);
      const scalarOutputs = new Set(signature.outputs.filter((o) => o.dims.length === 0).map((o) => o.name));
      const loaded: LoadedModel = { name: context.name, config, runtime, scalarOutputs };
      return new OnnxModel(loaded, modelFile, share, { key: keyOf(firstPlacement), session }, selected.fallbackReason);
    } catch (error) {
      await releaseSession(runtime, session);
      throw error;
    }
  }

  async createInstance(instance: InstanceContext): Promise<BackendInstance> {
    const placement: Placement = { kind: instance.kind, deviceId: instance.deviceId };
    const key = keyOf(placement);
    if (this.share) {
      let session = this.shared.get(key);
      if (!session) {
        session = this.open(placement);
        this.shared.set(key, session);
        // A failed open is reported to this instance, and retried by the next one.
        session.catch(() => this.shared.delete(key));
      }
      return new OnnxInstance(this.loaded, await session, false);
    }
    if (this.spare?.key === key) {
      const { session } = this.spare;
      this.spare = undefined;
      return new OnnxInstance(this.loaded, session, true);
    }
    return new OnnxInstance(this.loaded, await this.open(placement), true);
  }

  async finalize(): Promise<void> {
    // Sessions that instances owned were released by them; releaseSession skips those.
    await Promise.all([...this.owned].map((session) => releaseSession(this.loaded.runtime, session)));
    this.owned.clear();
    this.shared.clear();
    this.spare = undefined;
  }

  private async open(placement: Placement): Promise<OrtSession> {
    const { config, runtime, name } = this.loaded;
    const options: OrtSessionOptions = sessionOptionsFor(config, runtime, placement);
    const session = await openSession(runtime, this.modelFile, options, name);
    this.owned.add(session);
    return session;
  }
}

/** The distinct placements the config's instance groups ask for; CPU when there are none. */
function placementsOf(config: ConfigView): Placement[] {
  const placements: Placement[] = [];
  const seen = new Set<string>();
  for (const group of config.instance_group ?? []) {
    const devices = group.kind === 'KIND_GPU' ? (group.gpus?.length ? group.gpus : [0]) : [undefined];
    for (const deviceId of devices) {
      const placement: Placement = { kind: group.kind ?? 'KIND_CPU', deviceId };
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
