import { InferenceError, controlInputNames } from '@tritium/core/backend';
import type { BackendInstance, BackendModel, InstanceContext, ModelContext } from '@tritium/core/backend';
import { deviceOf } from './devices.js';
import type { ScriptModule, TorchAddon } from './native.js';
import { bindInputs, outputPositions } from './naming.js';
import { torchParameters } from './parameters.js';
import type { TorchParameters } from './parameters.js';
import { PytorchInstance } from './pytorch-instance.js';
import { applyThreadCounts } from './threads.js';

/** A loaded module and how many instances hold it. */
interface SharedModule {
  readonly module: Promise<ScriptModule>;
  holders: number;
}

/**
 * A model version: reads the config's parameters once, then loads model.pt for each
 * instance (or once per device with ENABLE_WEIGHT_SHARING) and maps the config's
 * tensors onto forward()'s arguments and results.
 */
export class PytorchModel implements BackendModel {
  readonly description: string;
  private readonly parameters: TorchParameters;
  private readonly shared = new Map<string, SharedModule>();

  constructor(
    private readonly context: ModelContext,
    private readonly addon: TorchAddon,
  ) {
    this.parameters = torchParameters(context.config);
    applyThreadCounts(context.name, this.parameters, addon);
    if (this.parameters.disableCudnn) addon.disableCudnn(true);
    this.description = `libtorch ${addon.torchVersion}`;
  }

  async createInstance(instance: InstanceContext): Promise<BackendInstance> {
    const device = deviceOf(instance);
    const module = await this.acquire(device);
    try {
      const { config } = this.context;
      const feedInputs = [...config.input.map((i) => i.name), ...config.batch_input.flatMap((b) => b.target_name)];
      const controls = controlInputNames(config);
      const inputs = bindInputs(this.context.name, feedInputs, controls, module.arguments());
      const strings = config.input.find((input) => input.data_type === 'TYPE_STRING');
      if (inputs.dict && strings) throw new InferenceError('INVALID_ARG', `model '${this.context.name}': input '${strings.name}' is BYTES, which a Dict[str, Tensor] cannot hold`);
      const outputs = outputPositions(config.output.map((o) => o.name));
      const thread = new this.addon.InstanceThread(module, { ...this.parameters.run, dictInput: inputs.dict });
      return new PytorchInstance(this.context, { feeds: [...feedInputs, ...controls], inputs, outputs }, thread, () => this.releaseModule(device, module), this.parameters.inline);
    } catch (error) {
      this.releaseModule(device, module);
      throw InferenceError.from(error, 'INVALID_ARG', `model '${this.context.name}': ${this.context.modelPath}`);
    }
  }

  /** A module for the device: its own, or with weight sharing the one the device's instances share. */
  private async acquire(device: string): Promise<ScriptModule> {
    if (!this.parameters.weightSharing) return this.load(device);
    let entry = this.shared.get(device);
    if (!entry) {
      entry = { module: this.load(device), holders: 0 };
      this.shared.set(device, entry);
      entry.module.catch(() => this.shared.delete(device));
    }
    entry.holders++;
    return entry.module;
  }

  private releaseModule(device: string, module: ScriptModule): void {
    const entry = this.shared.get(device);
    if (entry) {
      if (--entry.holders > 0) return;
      this.shared.delete(device);
    }
    module.release();
  }

  private async load(device: string): Promise<ScriptModule> {
    try {
      return await this.addon.load(this.context.modelPath, device);
    } catch (error) {
      throw InferenceError.from(error, 'INVALID_ARG', `model '${this.context.name}': libtorch cannot load ${this.context.modelPath} as TorchScript`);
    }
  }
}
