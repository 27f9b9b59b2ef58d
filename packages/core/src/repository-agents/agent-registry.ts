import { InferenceError } from '../errors.js';
import { checksumAgent } from './checksum-agent.js';
import type { RepositoryAgent } from './repository-agent.js';

const BUILT_IN: readonly RepositoryAgent[] = [checksumAgent];

/** The agents a server knows by name: the built-in ones, and those handed to it (ServerOptions.repositoryAgents), which take precedence. */
export class RepositoryAgentRegistry {
  private readonly agents = new Map<string, RepositoryAgent>();

  constructor(handed: readonly RepositoryAgent[] = []) {
    if (!Array.isArray(handed)) throw new InferenceError('INVALID_ARG', '`repositoryAgents` must be an array of repository agents');
    for (const agent of BUILT_IN) this.agents.set(agent.name, agent);
    const seen = new Set<string>();
    for (const agent of handed) {
      if (typeof agent?.name !== 'string' || agent.name === '' || typeof agent.modelAction !== 'function') {
        throw new InferenceError('INVALID_ARG', '`repositoryAgents`: each agent needs a non-empty `name` and a `modelAction` method');
      }
      if (seen.has(agent.name)) throw new InferenceError('INVALID_ARG', `\`repositoryAgents\`: two agents are named '${agent.name}'`);
      seen.add(agent.name);
      this.agents.set(agent.name, agent);
    }
  }

  /** The agent a config names; an unknown one is refused naming it, as Triton refuses an agent it cannot find. */
  get(name: string): RepositoryAgent {
    const agent = this.agents.get(name);
    if (agent) return agent;
    throw new InferenceError(
      'INVALID_ARG',
      `unable to find repository agent '${name}': the server has ${[...this.agents.keys()].map((known) => `'${known}'`).join(', ')} (ServerOptions.repositoryAgents adds others)`,
    );
  }
}
