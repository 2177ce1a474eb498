import { FeatureGate } from './feature-gate';
import { CONTROL_PLANE_FEATURES, NODE_AGENT_FEATURES } from './known-features';

describe('FeatureGate', () => {
  it('has the gates of both documents with stage and default', () => {
    expect(CONTROL_PLANE_FEATURES.size).toBe(96);
    expect(NODE_AGENT_FEATURES.size).toBe(88);
    expect(CONTROL_PLANE_FEATURES.get('CSIMigrationCloudD')).toEqual({ stage: 'BETA', default: true });
    expect(NODE_AGENT_FEATURES.get('CSIMigrationCloudD')).toEqual({ stage: 'BETA', default: false });
    expect(NODE_AGENT_FEATURES.get('Sysctls')).toEqual({ stage: 'BETA', default: true });
    expect(CONTROL_PLANE_FEATURES.has('Sysctls')).toBe(false);
    const gate = new FeatureGate(NODE_AGENT_FEATURES);
    expect(gate.knownFeatures()).toContain('GracefulNodeShutdown=true|false (ALPHA - default=false)');
    expect(() => gate.enabled('NoSuchGate')).toThrow('feature "NoSuchGate" is not registered in FeatureGate');
  });
});
