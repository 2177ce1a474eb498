// Prints the plain closing line CI reads, exactly `N passed, N failed`, alone on its line; tests skipped (opt-in
// ones such as the HA end-to-end file) are said on the line before it, so the closing line keeps its shape.
// A test file that fails to load counts as one failed test, so a broken file is never silently dropped.
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    const skipped = results.numPendingTests + results.numTodoTests;
    if (skipped > 0) process.stdout.write(`\n${skipped} skipped (not run)`);
    process.stdout.write(`\n${results.numPassedTests} passed, ${failed} failed\n`);
  }
}
module.exports = SummaryReporter;
