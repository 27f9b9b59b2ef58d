import type { InferenceServer } from '@tritium/core';

/**
 * Which models are decoupled, read from their configs once and forgotten whenever a
 * model changes state (a reload may change its transaction policy), so a request costs
 * a map lookup rather than a config copy.
 */
export class DecoupledModels {
  private readonly known = new Map<string, boolean>();
  /** Bumped by every state change, so that a lookup that raced one is not kept. */
  private generation = 0;
  private readonly forget = ({ name }: { name: string }) => {
    this.generation++;
    this.known.delete(name);
  };

  constructor(private readonly server: InferenceServer) {
    server.on('modelStateChanged', this.forget);
  }

  /** False for a model the server does not serve: the request then fails there, saying why. */
  async isDecoupled(name: string): Promise<boolean> {
    const known = this.known.get(name);
    if (known !== undefined) return known;
    const generation = this.generation;
    const decoupled = await this.server.modelConfig(name).then(
      (config) => config.model_transaction_policy?.decoupled === true,
      () => undefined,
    );
    if (decoupled === undefined) return false;
    if (generation === this.generation) this.known.set(name, decoupled);
    return decoupled;
  }

  close(): void {
    this.server.off('modelStateChanged', this.forget);
  }
}
