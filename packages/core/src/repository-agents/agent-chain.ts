import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { parseModelConfig } from '../config/index.js';
import type { ModelConfig } from '../config/schema.js';
import { InferenceError } from '../errors.js';
import type { ServerLogger } from '../observability/server-logger.js';
import { versionDirectories } from '../repository/local-repository-root.js';
import type { ModelSource } from '../repository/model-source.js';
import type { RepositoryAgentRegistry } from './agent-registry.js';
import type { RepositoryAgent, RepositoryAgentAction, RepositoryAgentModel } from './repository-agent.js';

/**
 * The agents a model's config names, run around one load of the model as Triton runs them:
 * `load` in the config's order before the model is built (each agent gets the location
 * the one before it left), then `load_complete` or `load_fail`, and for a model that
 * loaded, `unload` and `unload_complete`. The chain's `source` is where the model loads
 * from: the last location an agent set.
 */
export class RepositoryAgentChain {
  /** Actions run one after another, in the order they were asked for. */
  private actions: Promise<void> = Promise.resolve();

  private constructor(
    private readonly models: readonly AgentModel[],
    readonly source: ModelSource,
    private readonly log: ServerLogger,
  ) {}

  /**
   * Runs `load` on each agent `config` names. An unknown agent, or an agent's failure,
   * fails the load: the agents that ran hear `load_fail` and their directories go.
   */
  static async start(registry: RepositoryAgentRegistry, source: ModelSource, config: ModelConfig, log: ServerLogger): Promise<RepositoryAgentChain> {
    const declared = config.model_repository_agents?.agents ?? [];
    const models: AgentModel[] = [];
    let location = source.directory;
    let seen = config;
    try {
      for (const { name, parameters } of declared) {
        const agent = registry.get(name ?? '');
        // As Triton: an agent after one that moved the model reads the config found there.
        if (location !== source.directory) seen = await configAt(location);
        const model = new AgentModel(agent, source.name, location, seen, { ...parameters });
        models.push(model);
        await model.act('load');
        location = model.location;
      }
      const relocated: ModelSource =
        location === source.directory
          ? source
          : { name: source.name, directory: location, configPath: undefined, versions: await versionDirectories(source.name, location), removeDirectory: source.removeDirectory };
      return new RepositoryAgentChain(models, relocated, log);
    } catch (error) {
      await new RepositoryAgentChain(models, source, log).fail();
      throw error;
    }
  }

  /** Every version of the load serves. */
  complete(): Promise<void> {
    return this.run('load_complete');
  }

  /** The load failed: the agents hear it and their directories go. */
  fail(): Promise<void> {
    return this.run('load_fail', true);
  }

  /** The model starts to unload. */
  unload(): Promise<void> {
    return this.run('unload');
  }

  /** Every version of the model is finalized: the agents hear it and their directories go. */
  unloadComplete(): Promise<void> {
    return this.run('unload_complete', true);
  }

  /** Never rejects: past `load`, an agent's error is only logged, as Triton logs it. */
  private run(action: RepositoryAgentAction, release = false): Promise<void> {
    this.actions = this.actions.then(async () => {
      for (const model of this.models) {
        await model.act(action).catch((error: unknown) => {
          this.log.error(`repository agent '${model.agent.name}' of model '${model.name}' failed on ${action}: ${InferenceError.from(error).message}`);
        });
        if (release) await model.release().catch((error: unknown) => this.log.error(`cannot remove the directory repository agent '${model.agent.name}' made for model '${model.name}': ${String(error)}`));
      }
    });
    return this.actions;
  }
}

/** One agent's view of one model's load. */
class AgentModel implements RepositoryAgentModel {
  state: unknown;
  private action: RepositoryAgentAction | undefined;
  private mutableLocation: string | undefined;

  constructor(
    readonly agent: RepositoryAgent,
    readonly name: string,
    public location: string,
    readonly config: ModelConfig,
    readonly parameters: Readonly<Record<string, string>>,
  ) {}

  async act(action: RepositoryAgentAction): Promise<void> {
    this.action = action;
    await this.agent.modelAction(this, action);
  }

  setLocation(directory: string): void {
    this.checkLoading('setLocation');
    if (typeof directory !== 'string' || !isAbsolute(directory)) {
      throw new InferenceError('INVALID_ARG', `repository agent '${this.agent.name}': a model location must be an absolute directory path, got ${JSON.stringify(directory)}`);
    }
    this.location = directory;
  }

  async acquireMutableLocation(): Promise<string> {
    this.checkLoading('acquireMutableLocation');
    this.mutableLocation ??= await mkdtemp(join(tmpdir(), `tritium-agent-${this.agent.name.replace(/[^\w-]/g, '_')}-`));
    return this.mutableLocation;
  }

  async release(): Promise<void> {
    const directory = this.mutableLocation;
    this.mutableLocation = undefined;
    if (directory) await rm(directory, { recursive: true, force: true });
  }

  private checkLoading(what: string): void {
    if (this.action !== 'load') {
      throw new InferenceError('INVALID_ARG', `repository agent '${this.agent.name}': ${what}() is allowed only during the load action, not ${this.action ?? 'before it'}`);
    }
  }
}

/** The config.pbtxt at a location an agent moved the model to; empty when there is none or it cannot be read, as Triton. */
async function configAt(directory: string): Promise<ModelConfig> {
  const path = join(directory, 'config.pbtxt');
  const text = await readFile(path, 'utf8').catch(() => undefined);
  if (text === undefined) return {};
  try {
    return parseModelConfig(text, path);
  } catch {
    return {};
  }
}
