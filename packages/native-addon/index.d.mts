/** Where the install script keeps cmake-js's output, relative to the package root. */
export declare const BUILD_LOG: string;
/** Where the install script keeps its result, relative to the package root. */
export declare const BUILD_STATUS: string;

/** build/native-build.json, written by the install script whether or not the addon was built. */
export interface BuildStatus {
  readonly ok: boolean;
  /** Why the addon was not built (absent when ok). */
  readonly reason?: string;
  /** The build log, relative to the package root. */
  readonly log: string;
  /** The package manager that ran the install script (from npm_config_user_agent), or null. */
  readonly packageManager: string | null;
  /** When the install script ran (ISO 8601). */
  readonly at: string;
}

/** 'workspace' (a checkout of Tritium), 'npm', 'pnpm', or 'other' (another package manager). */
export type PackageManager = 'workspace' | 'npm' | 'pnpm' | 'other';

/** The package manager named by npm_config_user_agent, if any. */
export declare function packageManagerFromAgent(agent?: string): string | undefined;
/** Who installed the package at `packageRoot`. */
export declare function packageManagerOf(packageRoot: string, status?: BuildStatus): PackageManager;
/** The command that builds the addon again, e.g. "`npm rebuild @tritium/backend-python`". */
/** With `scriptRan` false (no build status), pnpm's command starts with `pnpm approve-builds`. */
export declare function rebuildCommand(packageName: string, manager: PackageManager, scriptRan?: boolean): string;
/** rebuildCommand for the package manager that installed the package at `packageRoot`. */
export declare function installHint(packageName: string, packageRoot: string): string;
/** build/native-build.json of the package at `packageRoot`, or undefined when there is none. */
export declare function readBuildStatus(packageRoot: string): BuildStatus | undefined;
/** "the build at install failed: <reason>; log: <absolute path>", or undefined when it did not fail. */
export declare function buildFailure(packageRoot: string, status?: BuildStatus): string | undefined;

export interface LoadAddonOptions {
  /** The .node file. */
  readonly path: string;
  readonly packageName: string;
  /** "the shared-memory addon" */
  readonly what: string;
  /** What to install before rebuilding: "install cmake and a C++ compiler". */
  readonly needs: string;
  /** The backend's package directory, where build/native-build.json is. */
  readonly packageRoot: string;
}

/** Loads the addon; throws an Error saying what is missing, what failed at install (and its log), and the command that rebuilds it. */
export declare function loadAddon<T>(options: LoadAddonOptions): T;
