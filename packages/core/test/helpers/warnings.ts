import { onTestFinished, vi } from 'vitest';

export interface CapturedWarning {
  /** The warning's code (`TRITIUM_W001`, ...); undefined for a warning emitted without one. */
  readonly code: string | undefined;
  readonly message: string;
}

/**
 * Collects the process warnings a test provokes, so the test asserts them and they are
 * not printed (a 'warning' listener alone does not stop Node printing them). The spy
 * ends with the test.
 */
export function captureWarnings(): CapturedWarning[] {
  const warnings: CapturedWarning[] = [];
  const spy = vi.spyOn(process, 'emitWarning').mockImplementation((warning: string | Error, options?: string | { code?: string }) => {
    const code = typeof options === 'object' ? options.code : undefined;
    warnings.push({ code, message: typeof warning === 'string' ? warning : warning.message });
  });
  onTestFinished(() => spy.mockRestore());
  return warnings;
}
