import { spawnSync } from 'node:child_process';

/** Why `python3` cannot import `modules` (printed once, for a test to skip with), or undefined when it can. */
export function pythonModulesMissing(...modules: string[]): string | undefined {
  const check = spawnSync('python3', ['-c', `import ${modules.join(', ')}`], { encoding: 'utf8' });
  if (check.error) return `python3 is not available (${check.error.message})`;
  if (check.status === 0) return undefined;
  const reason = `python3 cannot import ${modules.join(', ')} (pip install ${modules.join(' ')}): ${check.stderr.trim().split('\n').at(-1)}`;
  console.warn(`skipping: ${reason}`);
  return reason;
}
