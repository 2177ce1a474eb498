import { CONTROL_PLANE_FEATURES, FeatureGate } from '@platform/common';

import { JobControllerOptions } from './job-controller';

describe('JobControllerOptions', () => {
  test('IndexedJob follows the feature gate applied after the family (off by default, as in 1.21)', () => {
    const o = new JobControllerOptions();
    const collected: { featureGate?: FeatureGate } = {};
    o.applyTo(collected);
    expect(o.values().indexedJob).toBe(false);
    const gate = new FeatureGate(CONTROL_PLANE_FEATURES);
    collected.featureGate = gate;
    expect(o.values().indexedJob).toBe(false);
    gate.set('IndexedJob=true');
    expect(o.values()).toMatchObject({
      indexedJob: true,
      concurrentJobSyncs: 5,
      backoffBaseMs: 10_000,
      backoffMaxMs: 360_000,
    });
  });
});
