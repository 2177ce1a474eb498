import { ProfilingOptions } from './profiling-options';
import { parseForTest } from './testing/parse';

const parse = parseForTest;

describe('profiling options', () => {
  it('has per-daemon profiling defaults and deprecations', () => {
    const cm = new ProfilingOptions();
    parse([cm], []);
    expect([cm.enableProfiling, cm.enableContentionProfiling]).toEqual([true, false]);
    const sched = new ProfilingOptions({
      contentionProfiling: true,
      profilingDeprecated: 'use the --config file.',
      contentionProfilingDeprecated: 'use the --config file.',
    });
    const r = parse([sched], ['--profiling=false']);
    expect(sched.enableProfiling).toBe(false);
    expect(sched.enableContentionProfiling).toBe(true);
    expect(r.warnings).toEqual(['Flag --profiling has been deprecated, use the --config file.']);
  });
});
