import { type Node } from '@platform/api';

import { AddressError, agentLocation, DEFAULT_ADDRESS_TYPES } from './address';

const node = (addresses: { type: string; address: string }[], port?: number, hostname?: string): Node =>
  ({
    metadata: { name: 'n1', ...(hostname ? { labels: { 'kubernetes.io/hostname': hostname } } : {}) },
    status: { addresses, ...(port ? { daemonEndpoints: { kubeletEndpoint: { Port: port } } } : {}) },
  }) as Node;

const o = { preferredAddressTypes: [...DEFAULT_ADDRESS_TYPES], port: 10250, useNodeStatusPort: false };

describe('agentLocation', () => {
  it('takes the first address of the first preferred type the node has', () => {
    const n = node([
      { type: 'InternalIP', address: '10.0.0.1' },
      { type: 'Hostname', address: 'n1.local' },
    ]);
    expect(agentLocation(n, o)).toEqual({ host: 'n1.local', port: 10250 });
    expect(agentLocation(n, { ...o, preferredAddressTypes: ['InternalIP', 'Hostname'] }).host).toBe('10.0.0.1');
  });

  it("falls back to the hostname label for Hostname, and takes the node's port when asked", () => {
    const n = node([{ type: 'ExternalIP', address: '1.2.3.4' }], 12345, 'from-label');
    expect(agentLocation(n, o)).toEqual({ host: 'from-label', port: 10250 });
    expect(agentLocation(n, { ...o, useNodeStatusPort: true })).toEqual({ host: 'from-label', port: 12345 });
    expect(agentLocation(node([{ type: 'InternalIP', address: '::1' }]), { ...o, useNodeStatusPort: true })).toEqual({
      host: '::1',
      port: 10250,
    });
  });

  it('says which addresses the node has when none is preferred', () => {
    const n = node([{ type: 'ExternalIP', address: '1.2.3.4' }]);
    expect(() => agentLocation(n, { ...o, preferredAddressTypes: ['InternalIP'] })).toThrow(AddressError);
    expect(() => agentLocation(n, { ...o, preferredAddressTypes: ['InternalIP'] })).toThrow(
      'no preferred addresses found; known addresses: [{ExternalIP 1.2.3.4}]',
    );
  });
});
