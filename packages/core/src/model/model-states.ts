import { InferenceError } from '../errors.js';
import type { ModelIndexEntry, ModelState } from '../types.js';

/**
 * The lifecycle of a model version: the states that may follow each one. A version
 * enters as LOADING (a load builds it) or UNAVAILABLE (it failed, or the version policy
 * names a directory that is missing).
 */
const FIRST_STATES: readonly ModelState[] = ['LOADING', 'UNAVAILABLE'];
const NEXT_STATES: Readonly<Record<ModelState, readonly ModelState[]>> = {
  LOADING: ['READY', 'UNAVAILABLE'],
  // READY again: a reload replaced it, or failed while it kept serving (a new reason).
  READY: ['READY', 'UNLOADING'],
  // LOADING: a load of the same version number while the old one still drains;
  // UNAVAILABLE: drained, or the policy still names it but its directory is gone.
  UNLOADING: ['UNAVAILABLE', 'LOADING'],
  UNAVAILABLE: ['UNAVAILABLE', 'LOADING'],
};

export interface VersionState {
  readonly state: ModelState;
  readonly reason: string;
}

/** A reason as stored: text, or read when asked (a READY version's backend description, which may change while it serves). */
type Reason = string | (() => string);

const textOf = (reason: Reason) => (typeof reason === 'string' ? reason : reason());

/**
 * The states of one model's versions, and its model-level failure (one that came
 * before any version was chosen, such as a bad config). Every change follows the
 * lifecycle above and is reported once; a change that changes nothing is not (a reload
 * that replaced a serving version is reported: what its users read of it may differ).
 */
export class ModelStates {
  private readonly versions = new Map<number, { readonly state: ModelState; readonly reason: Reason }>();
  /** Why the model as a whole is UNAVAILABLE, if it is. */
  private failure: string | undefined;

  constructor(
    private readonly name: string,
    private readonly onChange: (entry: ModelIndexEntry) => void,
  ) {}

  get isEmpty(): boolean {
    return this.versions.size === 0 && this.failure === undefined;
  }

  has(version: number): boolean {
    return this.versions.has(version);
  }

  get(version: number): VersionState | undefined {
    const stored = this.versions.get(version);
    return stored && { state: stored.state, reason: textOf(stored.reason) };
  }

  /** What a request naming no version hears: the model-level failure, else the highest version's state. */
  forLatest(): VersionState | undefined {
    if (this.failure !== undefined) return { state: 'UNAVAILABLE', reason: this.failure };
    return this.versions.size ? this.get(Math.max(...this.versions.keys())) : undefined;
  }

  /**
   * `replaced`: a reload put a new load of the version in place of the one serving, a
   * change even where state and reason stay the same. A reason given as a function is
   * read whenever the state is read; the change is reported with its text now.
   */
  set(version: number, state: ModelState, reason: Reason, replaced = false): void {
    const current = this.get(version);
    if (!replaced && current?.state === state && current.reason === textOf(reason)) return;
    const allowed = current ? NEXT_STATES[current.state] : FIRST_STATES;
    if (!allowed.includes(state)) {
      throw new InferenceError('INTERNAL', `model '${this.name}' version ${version}: no transition from ${current?.state ?? 'nothing'} to ${state}`);
    }
    this.versions.set(version, { state, reason });
    this.onChange({ name: this.name, version, state, reason: textOf(reason) });
  }

  /** Marks the whole model UNAVAILABLE. */
  fail(reason: string): void {
    if (this.failure === reason) return;
    this.failure = reason;
    this.onChange({ name: this.name, version: undefined, state: 'UNAVAILABLE', reason });
  }

  /** After a load that succeeded: the model-level failure, and versions neither kept nor still serving, leave the index. */
  keepOnly(versions: ReadonlySet<number>): void {
    this.failure = undefined;
    for (const version of this.versions.keys()) if (!versions.has(version)) this.versions.delete(version);
  }

  /** Index rows, in no particular order; the model-level failure has version undefined. */
  entries(): ModelIndexEntry[] {
    const rows: ModelIndexEntry[] = [...this.versions].map(([version, { state, reason }]) => ({ name: this.name, version, state, reason: textOf(reason) }));
    if (this.failure !== undefined) rows.push({ name: this.name, version: undefined, state: 'UNAVAILABLE', reason: this.failure });
    return rows;
  }
}
