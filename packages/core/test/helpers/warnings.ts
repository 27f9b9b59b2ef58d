import { onTestFinished, vi } from 'vitest';

/**
 * Collects the process warnings a test provokes, so the test asserts them and they are
 * not printed (a 'warning' listener alone does not stop Node printing them). The spy
 * ends with the test.
 */
export function captureWarnings(): string[] {
  const messages: string[] = [];
  const spy = vi.spyOn(process, 'emitWarning').mockImplementation((warning: string | Error) => {
    messages.push(typeof warning === 'string' ? warning : warning.message);
  });
  onTestFinished(() => spy.mockRestore());
  return messages;
}
