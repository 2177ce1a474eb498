// Prints the plain closing line CI reads: `N passed, N failed` (and `, N skipped` when some were).
// A test file that fails to load counts as one failed test, so a broken file is never silently dropped.
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    const skipped = results.numPendingTests + results.numTodoTests;
    let line = `${results.numPassedTests} passed, ${failed} failed`;
    if (skipped > 0) line += `, ${skipped} skipped`;
    process.stdout.write(`\n${line}\n`);
  }
}
module.exports = SummaryReporter;
