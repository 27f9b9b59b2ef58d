import { describe, expect, it } from 'vitest';
import { modelTable } from '../src/cli/model-table.js';

// The official backends are core's one list (core/src/backend/registry.ts), loaded by
// name with --backend-config's settings: core/test/backend/registry.test.ts tests it.

describe('modelTable', () => {
  it("draws Triton's model table, with the reason of a version that is not ready", () => {
    expect(
      modelTable([
        { name: 'add_sub', version: 1, state: 'READY', reason: '' },
        { name: 'broken', version: undefined, state: 'UNAVAILABLE', reason: 'no config' },
      ]),
    ).toBe(
      [
        '+---------+---------+------------------------+',
        '| Model   | Version | Status                 |',
        '+---------+---------+------------------------+',
        '| add_sub | 1       | READY                  |',
        '| broken  | -       | UNAVAILABLE: no config |',
        '+---------+---------+------------------------+',
      ].join('\n'),
    );
  });
});
