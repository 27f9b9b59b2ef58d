import type { Reporter, TestCase, TestModule } from 'vitest/node';

const CHECK_EVERY_MS = 60_000;
/** The slowest file (the TensorFlow tests) takes about 4.5 minutes on 2 cores. */
const LONG_AFTER_MS = 6 * 60_000;

/**
 * Names each test file that has run for over six minutes, and the test it is in, once a
 * minute. A fork blocked in native or synchronous code never reaches its test timeout,
 * and the run would then wait silently until CI's clock runs out; this says where.
 */
export default class LongFileReporter implements Reporter {
  private readonly running = new Map<string, { started: number; test?: string }>();
  private readonly timer = setInterval(() => this.report(), CHECK_EVERY_MS).unref();

  // Queued: a fork began the file, before its imports (a file stuck loading is named too).
  onTestModuleQueued(module: TestModule): void {
    this.running.set(module.moduleId, { started: Date.now() });
  }

  onTestCaseReady(test: TestCase): void {
    const file = this.running.get(test.module.moduleId);
    if (file) file.test = test.fullName;
  }

  onTestModuleEnd(module: TestModule): void {
    this.running.delete(module.moduleId);
  }

  onTestRunEnd(): void {
    clearInterval(this.timer);
  }

  private report(): void {
    const now = Date.now();
    for (const [file, { started, test }] of this.running) {
      if (now - started < LONG_AFTER_MS) continue;
      console.log(`still running after ${((now - started) / 60_000).toFixed(0)} min: ${file}${test ? `, in "${test}"` : ''}`);
    }
  }
}
