import type { Reporter, TestModule } from 'vitest/node';

/**
 * Ends a run with one plain line, `N passed, N failed, N skipped`, that CI tooling
 * reads to tell how many tests ran (vitest's own summary has another shape), after the
 * failed tests' names: CI shows only the end of a long output.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    const failed: string[] = [];
    for (const module of modules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') counts.passed++;
        else if (state === 'failed') {
          counts.failed++;
          failed.push(`${module.moduleId}: ${test.fullName}`);
        } else counts.skipped++;
      }
      // A file can fail outside any test: an import error, a hook, a fork that died.
      for (const error of module.errors()) failed.push(`${module.moduleId}: ${error.message.split('\n')[0]}`);
    }
    if (failed.length > 0) console.log(`\nfailed:\n${failed.map((name) => `  ${name}`).join('\n')}`);
    console.log(`\n${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`);
  }
}
