import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { TRITIUM_WARNINGS } from '@tritium/core';
import { emitTritiumWarning } from '@tritium/core/backend';

const DOC = new URL('../../../docs/warnings.md', import.meta.url);

/** The table of docs/warnings.md: code → its "when it is emitted" column, backticks left out. */
function documented(): Map<string, string> {
  const rows = readFileSync(DOC, 'utf8').matchAll(/^\| `(TRITIUM_W\d+)` \| ([^|]+) \|/gm);
  return new Map([...rows].map(([, code, when]) => [code!, when!.trim().replaceAll('`', '')]));
}

describe("Tritium's warning codes", () => {
  const codes = Object.keys(TRITIUM_WARNINGS);

  it('are TRITIUM_W001 on, numbered without a gap, each with a one-line description', () => {
    expect(codes).toEqual(codes.map((_, i) => `TRITIUM_W${String(i + 1).padStart(3, '0')}`));
    for (const description of Object.values(TRITIUM_WARNINGS)) expect(description).toMatch(/^[^\n]+$/);
    expect(Object.isFrozen(TRITIUM_WARNINGS)).toBe(true);
  });

  it('are each documented in docs/warnings.md, in order, as the table describes them', () => {
    expect(documented()).toEqual(new Map(Object.entries(TRITIUM_WARNINGS)));
    expect([...documented().keys()]).toEqual(codes);
  });

  it('are emitted as process warnings named TritiumWarning with their code', () => {
    const emitWarning = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    try {
      emitTritiumWarning('TRITIUM_W007', 'backend finalize failed: Error: gone');
      expect(emitWarning).toHaveBeenCalledWith('backend finalize failed: Error: gone', { type: 'TritiumWarning', code: 'TRITIUM_W007' });
    } finally {
      emitWarning.mockRestore();
    }
  });
});
