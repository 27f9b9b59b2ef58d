import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * What every package of the workspace promises an npm user (issue 21): the Node versions
 * it runs on, its package.json reachable through its exports (tools read it), a README
 * for its npm page, and no relative links to the repository's docs, which break there.
 */
const PACKAGES = fileURLToPath(new URL('../../../', import.meta.url));
const names = readdirSync(PACKAGES).filter((name) => existsSync(join(PACKAGES, name, 'package.json')));

describe.each(names)('packages/%s', (name) => {
  const manifest = JSON.parse(readFileSync(join(PACKAGES, name, 'package.json'), 'utf8')) as { engines?: { node?: string }; exports?: Record<string, unknown> };

  it('says it needs Node 20 or later and exports its package.json', () => {
    expect(manifest.engines?.node).toBe('>=20');
    expect(manifest.exports?.['./package.json']).toBe('./package.json');
  });

  it('has a README without relative links into the repository', () => {
    const readme = readFileSync(join(PACKAGES, name, 'README.md'), 'utf8');
    expect(readme.match(/\]\(\.\.\/[^)]*\)/g) ?? []).toEqual([]);
  });
});
