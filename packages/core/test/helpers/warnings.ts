import { vi } from 'vitest';

/** The TritiumWarnings emitted while `work` runs, captured instead of printed to the test output. */
export async function tritiumWarningsDuring(work: () => Promise<unknown>): Promise<string[]> {
  const emit = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
  try {
    await work();
    return emit.mock.calls.filter(([, type]) => (type as unknown) === 'TritiumWarning').map(([message]) => String(message));
  } finally {
    emit.mockRestore();
  }
}
