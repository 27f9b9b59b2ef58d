import type { InferenceServer, ModelIndexEntry } from '@tritium/core';
import { OpenAIError } from './openai-error.js';

/** OpenAI's model object; `owned_by` says who serves it, as Triton's frontend says "Triton Inference Server". */
interface OpenAIModel {
  readonly id: string;
  readonly object: 'model';
  readonly created: number;
  readonly owned_by: string;
}

const OWNED_BY = 'Tritium';

/**
 * `/v1/models` and `/v1/models/{id}`: every model with a READY version (generation and
 * embedding models alike, as Triton's frontend lists every ready model), `created` being
 * when the frontend saw it become ready (or started, for those ready before).
 */
export class ModelList {
  private readonly readySince = new Map<string, number>();
  private readonly started = nowSeconds();
  private readonly onChange = (entry: ModelIndexEntry) => {
    if (entry.state === 'READY') this.readySince.set(entry.name, nowSeconds());
  };

  constructor(private readonly server: InferenceServer) {
    server.on('modelStateChanged', this.onChange);
  }

  async list(): Promise<{ object: 'list'; data: OpenAIModel[] }> {
    const names = new Set((await this.server.repositoryIndex()).filter((entry) => entry.state === 'READY').map((entry) => entry.name));
    return { object: 'list', data: [...names].map((name) => this.model(name)) };
  }

  async retrieve(id: string): Promise<OpenAIModel> {
    const model = (await this.list()).data.find((m) => m.id === id);
    if (!model) throw new OpenAIError(404, `The model '${id}' does not exist or is not ready`, { param: 'model', code: 'model_not_found' });
    return model;
  }

  close(): void {
    this.server.off('modelStateChanged', this.onChange);
  }

  private model(id: string): OpenAIModel {
    return { id, object: 'model', created: this.readySince.get(id) ?? this.started, owned_by: OWNED_BY };
  }
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
