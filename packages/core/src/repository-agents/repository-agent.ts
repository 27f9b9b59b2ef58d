import type { ModelConfig } from '../config/schema.js';

/**
 * The moments an agent hears of, in Triton's order (TRITONREPOAGENT_ActionType): `load`
 * before the model's config is completed and its versions built; then `load_complete`
 * or `load_fail`; for a model that loaded, `unload` when it starts to unload and
 * `unload_complete` once every version is finalized.
 */
export type RepositoryAgentAction = 'load' | 'load_complete' | 'load_fail' | 'unload' | 'unload_complete';

/** One model's load as one agent sees it, through all its actions (Triton's TRITONREPOAGENT_AgentModel). */
export interface RepositoryAgentModel {
  /** The model's name. */
  readonly name: string;
  /** The model directory as this agent gets it: the repository's, or where the agent before it moved the model. */
  readonly location: string;
  /** The model's configuration as written (not completed): the load's override, or the file read at `location`; empty when there is none. */
  readonly config: ModelConfig;
  /** This agent's `parameters` from the config's `model_repository_agents` entry. */
  readonly parameters: Readonly<Record<string, string>>;
  /** During `load` only: the model loads from `directory` (an absolute path) instead; the agents after this one get it as their location. */
  setLocation(directory: string): void;
  /** During `load` only: a new empty directory for this model's files, removed once the model is unloaded or fails to load. */
  acquireMutableLocation(): Promise<string>;
  /** The agent's own data for this model, kept from one action to the next. */
  state: unknown;
}

/**
 * A repository agent (Triton's TRITONREPOAGENT API): it acts on a model that names it in
 * `model_repository_agents` around the model's load and unload. What it throws from
 * `load` fails the load with its message; errors from the other actions are logged.
 */
export interface RepositoryAgent {
  /** The name a config's `model_repository_agents { agents [ { name: ... } ] }` uses. */
  readonly name: string;
  modelAction(model: RepositoryAgentModel, action: RepositoryAgentAction): void | Promise<void>;
}
