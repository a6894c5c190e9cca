import type { Reporter, TestModule } from 'vitest/node';

/** Ends the run with the plain `N passed, N failed, N skipped` line that CI reads, after vitest's own summary. */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') counts.passed++;
        else if (state === 'failed') counts.failed++;
        else counts.skipped++;
      }
      if (module.state() === 'failed' && [...module.children.allTests()].length === 0) counts.failed++;
    }
    counts.failed += unhandledErrors.length;
    process.stdout.write(`\n${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
  }
}
