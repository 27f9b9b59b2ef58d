import type { Reporter, SerializedError, TestModule } from 'vitest/node';

/**
 * Ends a run with one plain line, `N passed, N failed, N skipped`, that CI tooling
 * reads to tell how many tests ran (vitest's own summary has another shape), after the
 * failed tests' names and the errors outside any test: CI shows only the end of a long
 * output.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    const failed: string[] = [];
    const firstLine = (error: SerializedError) => error.message.split('\n')[0];
    for (const module of modules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') counts.passed++;
        else if (state === 'failed') {
          counts.failed++;
          failed.push(`${module.moduleId}: ${test.fullName}`);
        } else counts.skipped++;
      }
      // A file or a suite can fail outside any test (an import, a hook), its tests then skipped.
      for (const error of module.errors()) failed.push(`${module.moduleId}: ${firstLine(error)}`);
      for (const suite of module.children.allSuites()) for (const error of suite.errors()) failed.push(`${module.moduleId}: ${suite.fullName}: ${firstLine(error)}`);
    }
    // A test fork that died ("Worker exited unexpectedly") is reported here.
    for (const error of unhandledErrors) failed.push(`unhandled: ${firstLine(error)}`);
    if (failed.length > 0) console.log(`\nfailed:\n${failed.map((name) => `  ${name}`).join('\n')}`);
    console.log(`\n${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`);
  }
}
