import type { ModelConfig } from '../config/schema.js';

export interface VersionSelection {
  /** Versions to serve, ascending. */
  readonly versions: number[];
  /** Versions the policy names that have no directory. */
  readonly missing: number[];
}

/** Applies a config's version_policy (latest / all / specific) to the version directories found. */
export function selectVersions(policy: ModelConfig['version_policy'], available: readonly number[]): VersionSelection {
  const sorted = [...available].sort((a, b) => a - b);
  // No policy at all means Triton's default, the latest one version.
  if (!policy) return { versions: sorted.slice(-1), missing: [] };
  if (policy.latest) {
    // latest {} is num_versions 0 (the proto default): nothing, as in Triton.
    const count = Number(policy.latest.num_versions ?? 0);
    return { versions: count > 0 ? sorted.slice(-count) : [], missing: [] };
  }
  if (policy.specific) {
    const wanted = [...new Set((policy.specific.versions ?? []).map(Number))].sort((a, b) => a - b);
    return {
      versions: wanted.filter((v) => sorted.includes(v)),
      missing: wanted.filter((v) => !sorted.includes(v)),
    };
  }
  // `all {}`, and a policy with no member set, which Triton also reads as all.
  return { versions: sorted, missing: [] };
}
