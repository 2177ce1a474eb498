import { FeatureGate } from '../features/feature-gate';
import { CONTROL_PLANE_FEATURES, NODE_AGENT_FEATURES } from '../features/known-features';

import { FeatureGateOptions } from './feature-gate-options';
import { parseForTest } from './testing/parse';

const parse = parseForTest;

describe('feature gate options', () => {
  it('sets gates, honours AllAlpha/AllBeta, and knows both lists', () => {
    const gate = new FeatureGate(CONTROL_PLANE_FEATURES);
    const r = parse(
      [new FeatureGateOptions(gate)],
      ['--feature-gates=EphemeralContainers=true,ServerSideApply=false', '--feature-gates=AllBeta=true'],
    );
    expect(r.errors).toEqual([]);
    expect(gate.enabled('EphemeralContainers')).toBe(true);
    expect(gate.enabled('ServerSideApply')).toBe(false); // explicit beats AllBeta
    expect(gate.enabled('DownwardAPIHugePages')).toBe(true); // beta, default false, AllBeta
    expect(gate.enabled('IndexedJob')).toBe(false); // alpha untouched
    expect(gate.toString()).toBe('AllBeta=true,EphemeralContainers=true,ServerSideApply=false');
    const g2 = new FeatureGate(CONTROL_PLANE_FEATURES);
    g2.set('AllAlpha=true,IndexedJob=false');
    expect(g2.enabled('MemoryManager')).toBe(true);
    expect(g2.enabled('IndexedJob')).toBe(false);
    expect(g2.enabled('APIListChunking')).toBe(true);
  });

  it('rejects unknown gates and bad values, naming them, and changes nothing', () => {
    const gate = new FeatureGate(CONTROL_PLANE_FEATURES);
    const r = parse(
      [new FeatureGateOptions(gate)],
      [
        '--feature-gates=IndexedJob=true,Bogus=true',
        '--feature-gates=IndexedJob=yes',
        '--feature-gates=IndexedJob',
        '--feature-gates=Sysctls=true',
      ],
    );
    expect(r.messages).toEqual([
      'invalid argument "IndexedJob=true,Bogus=true" for "--feature-gates" flag: unrecognized feature gate: Bogus',
      'invalid argument "IndexedJob=yes" for "--feature-gates" flag: invalid value of IndexedJob=yes, err: strconv.ParseBool: parsing "yes": invalid syntax',
      'invalid argument "IndexedJob" for "--feature-gates" flag: missing bool value for IndexedJob',
      'invalid argument "Sysctls=true" for "--feature-gates" flag: unrecognized feature gate: Sysctls',
    ]);
    expect(gate.enabled('IndexedJob')).toBe(false);
  });

  it('is deprecated on the node agent', () => {
    const r = parse(
      [new FeatureGateOptions(new FeatureGate(NODE_AGENT_FEATURES), 'set it in the --config file.')],
      ['--feature-gates=Sysctls=false'],
    );
    expect(r.warnings).toEqual(['Flag --feature-gates has been deprecated, set it in the --config file.']);
  });
});
