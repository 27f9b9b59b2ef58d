// Loading a backend's native addon, and the hint that says how to build it. The install
// script (install.mjs) leaves build/native-build.log and build/native-build.json in the
// backend's package; npm hides install-script output, so the loader reads the status
// file and says what failed at install, and where the log is.
//
// Plain ESM with hand-written types and no build step: the backends' install scripts
// import it before anything in the workspace is built, and the backends' bundles inline it.
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, sep } from 'node:path';

/** Where the install script keeps cmake-js's output, relative to the package root. */
export const BUILD_LOG = join('build', 'native-build.log');
/** Where the install script keeps its result, relative to the package root. */
export const BUILD_STATUS = join('build', 'native-build.json');

/** The package manager named by npm_config_user_agent ("npm/10.8.2 node/v20…", "pnpm/10.34.9 npm/? …"), if any. */
export function packageManagerFromAgent(agent = process.env.npm_config_user_agent) {
  const name = agent?.trim().split('/')[0];
  return name || undefined;
}

/**
 * Who installed the package at `packageRoot`: 'workspace' for a checkout of Tritium (not under
 * node_modules), else the package manager recorded at install, else 'pnpm' under
 * node_modules/.pnpm, else the one running this process (npm_config_user_agent), else 'npm'.
 */
export function packageManagerOf(packageRoot, status = readBuildStatus(packageRoot)) {
  let real = packageRoot;
  try {
    real = realpathSync(packageRoot);
  } catch {
    // A root that does not exist (tests point the loader elsewhere): judge the path as given.
  }
  const parts = real.split(sep);
  if (!parts.includes('node_modules')) return 'workspace';
  if (status?.packageManager === 'npm' || status?.packageManager === 'pnpm') return status.packageManager;
  if (parts.includes('.pnpm')) return 'pnpm';
  const running = status?.packageManager ?? packageManagerFromAgent();
  return !running || running === 'npm' ? 'npm' : running === 'pnpm' ? 'pnpm' : 'other';
}

/**
 * The command that builds the addon of `packageName` again, for a package manager as packageManagerOf
 * names it. pnpm 10 runs a dependency's install script only once the project allows it: when the
 * script never ran (`scriptRan` false), the pnpm command starts with `pnpm approve-builds`.
 */
export function rebuildCommand(packageName, manager, scriptRan = true) {
  const npm = `\`npm rebuild ${packageName}\``;
  const pnpm = `${scriptRan ? '' : '`pnpm approve-builds` (allowing its install script), then '}\`pnpm rebuild ${packageName}\``;
  switch (manager) {
    case 'workspace':
      return `\`pnpm --filter ${packageName} build:native\``;
    case 'npm':
      return npm;
    case 'pnpm':
      return pnpm;
    default:
      return `${npm} (pnpm: ${pnpm})`;
  }
}

/** "`npm rebuild <name>`" or its pnpm or workspace equivalent, for the package at `packageRoot`. */
export function installHint(packageName, packageRoot) {
  const status = readBuildStatus(packageRoot);
  return rebuildCommand(packageName, packageManagerOf(packageRoot, status), status !== undefined);
}

/** The install script's result for the package at `packageRoot`, or undefined when it left none. */
export function readBuildStatus(packageRoot) {
  try {
    const status = JSON.parse(readFileSync(join(packageRoot, BUILD_STATUS), 'utf8'));
    return status && typeof status === 'object' && typeof status.ok === 'boolean' ? status : undefined;
  } catch {
    return undefined;
  }
}

/** What the install script's status adds to a load failure: why the build failed and where its log is. */
export function buildFailure(packageRoot, status = readBuildStatus(packageRoot)) {
  if (!status || status.ok) return undefined;
  const log = join(packageRoot, status.log ?? BUILD_LOG);
  const when = status.at ? ` at ${status.at}` : '';
  return `the build at install${when} failed: ${status.reason}; log: ${existsSync(log) ? log : `${log} (gone)`}`;
}

/**
 * Loads the addon at `path` (require of a .node file). Throws an Error:
 *   "<what> of <packageName> is not built (<path> does not exist; the build at install failed:
 *    <reason>; log: <file>): <needs>, then run `npm rebuild <packageName>`"
 */
export function loadAddon({ path, packageName, what, needs, packageRoot }) {
  let reason;
  if (!existsSync(path)) {
    reason = `${path} does not exist`;
  } else {
    try {
      return createRequire(path)(path);
    } catch (error) {
      reason = `${path} does not load: ${error instanceof Error ? error.message : String(error)}`;
    }
  }
  const status = readBuildStatus(packageRoot);
  const failure = buildFailure(packageRoot, status);
  const manager = packageManagerOf(packageRoot, status);
  if (failure) reason += `; ${failure}`;
  else if (!status && manager !== 'workspace') reason += '; its install script did not run';
  throw new Error(`${what} of ${packageName} is not built (${reason}): ${needs}, then run ${rebuildCommand(packageName, manager, status !== undefined)}`);
}
