import type { BuildStatus } from './index.mjs';

/** Whether `command` runs, by path or found on PATH. */
export declare function onPath(command: string): boolean;
/** Why cmake-js cannot build in `packageRoot`, or null when cmake-js, cmake and a C++ compiler are all there. */
export declare function missingBuildTool(packageRoot: string): string | null;

export interface BuildAddonOptions {
  readonly packageRoot: string;
  readonly packageName: string;
  /** "the shared-memory addon" */
  readonly what: string;
  /** "build/Release/shared_memory.node", relative to packageRoot. */
  readonly addonFile: string;
  /** What to install before rebuilding: "install cmake and a C++ compiler". */
  readonly needs: string;
  /** Why this platform cannot have the addon, or null. */
  readonly unsupported?: string | null;
  /** Checked after cmake-js, cmake and the compiler: why the build cannot run, or null. */
  readonly missing?: () => string | null;
  /** Exit 1 and print the log when the build fails. */
  readonly strict?: boolean;
}

/** Builds the addon with cmake-js, never throwing; writes build/native-build.{log,json} and prints one line. */
export declare function buildAddon(options: BuildAddonOptions): BuildStatus;
