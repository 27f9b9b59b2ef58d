import { InferenceError } from '../errors.js';
import { TraceFile } from './trace-file.js';
import { TraceSampler } from './trace-sampler.js';
import { invalidReason, isTracing, type TraceSettingChanges, type TraceSettings } from './trace-settings.js';

type SettingName = keyof TraceSettingChanges;
type Values = { -readonly [K in SettingName]?: TraceSettings[K] };

/** A layer of settings: the values it names itself and the sampler in force for it. */
interface Layer {
  own: Values;
  sampler: TraceSampler;
}

/**
 * The global trace setting and the models' own, as Triton's TraceManager keeps them: a
 * model names some settings and takes the others from the global ones, field by field, so
 * a global change reaches them; clearing (null) a model's last own setting leaves it on
 * the global setting, and clearing a global one goes back to the server's start-up value.
 */
export class TraceSettingTable {
  private readonly global: Layer;
  private readonly models = new Map<string, Layer>();
  /** By path, so that settings naming one file write one JSON array. */
  private readonly files = new Map<string, TraceFile>();

  constructor(private readonly startup: TraceSettings) {
    const reason = invalidReason(startup, true);
    if (reason) throw new InferenceError('INVALID_ARG', `invalid trace settings: ${reason}`);
    this.global = { own: {}, sampler: this.samplerOf(startup) };
  }

  /** The settings in force for `model` (the global ones when none), trace_count as it stands. */
  settings(model?: string): TraceSettings {
    const sampler = this.samplerFor(model);
    return { ...sampler.settings, trace_count: sampler.count };
  }

  samplerFor(model: string | undefined): TraceSampler {
    return ((model !== undefined && this.models.get(model)) || this.global).sampler;
  }

  /** Whether any setting traces: the tracer observes requests only then. */
  tracing(): boolean {
    if (isTracing(this.global.sampler.settings)) return true;
    for (const layer of this.models.values()) if (isTracing(layer.sampler.settings)) return true;
    return false;
  }

  /** Applies checked changes, all or none (INVALID_ARG with Triton's reason when the result could not trace). */
  update(changes: TraceSettingChanges, model?: string): TraceSettings {
    const layer = model === undefined ? this.global : this.models.get(model);
    const own: Values = { ...layer?.own };
    for (const [name, value] of Object.entries(changes) as [SettingName, TraceSettings[SettingName] | null | undefined][]) {
      if (value === null) delete own[name];
      else if (value !== undefined) (own as Record<string, unknown>)[name] = value;
    }
    const base = model === undefined ? this.startup : this.global.sampler.settings;
    const merged = { ...base, ...own };
    const reason = invalidReason(merged);
    if (reason) throw new InferenceError('INVALID_ARG', `Attempting to set invalid trace setting :${reason}`);
    if (model === undefined) {
      this.replace(this.global, own, merged);
      // Models that take some settings from the global ones take the new ones.
      for (const modelLayer of this.models.values()) {
        const settings = { ...merged, ...modelLayer.own };
        // A model that names every field keeps its setting, and its count, as Triton's.
        if (!sameSettings(settings, modelLayer.sampler.settings)) this.replace(modelLayer, modelLayer.own, settings);
      }
    } else if (Object.keys(own).length === 0) {
      if (layer) layer.sampler.retire();
      this.models.delete(model);
    } else if (layer) {
      this.replace(layer, own, merged);
    } else {
      this.models.set(model, { own, sampler: this.samplerOf(merged) });
    }
    return this.settings(model);
  }

  /** Writes every setting's traces and closes the files (the server stops). */
  close(): void {
    this.global.sampler.retire();
    for (const layer of this.models.values()) layer.sampler.retire();
    for (const file of this.files.values()) file.close();
  }

  private replace(layer: Layer, own: Values, settings: TraceSettings): void {
    layer.sampler.retire();
    layer.own = own;
    layer.sampler = this.samplerOf(settings);
  }

  private samplerOf(settings: TraceSettings): TraceSampler {
    const path = settings.trace_file;
    let file = this.files.get(path);
    if (path !== '' && !file) this.files.set(path, (file = new TraceFile(path)));
    return new TraceSampler(settings, file);
  }
}

function sameSettings(a: TraceSettings, b: TraceSettings): boolean {
  return (Object.keys(a) as (keyof TraceSettings)[]).every((name) => String(a[name]) === String(b[name]));
}
