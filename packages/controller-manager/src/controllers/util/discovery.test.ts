/** Discovery against a real API server: every served resource once, under its `.platform` group. */
import { RestClient } from '@platform/client';

import { type ControllerHarness, startControllerHarness } from '../../testing/harness';
import { discoverPreferredResources } from './discovery';

jest.setTimeout(90_000);

let h: ControllerHarness;

beforeAll(async () => {
  h = await startControllerHarness();
});

afterAll(async () => {
  await h?.stop();
});

test('the Kubernetes names the server lists for kubectl (certificates.k8s.io) are skipped: they are aliases', async () => {
  const apis = await h.server.request('GET', '/apis');
  expect((apis.json.groups as { name: string }[]).map((g) => g.name)).toContain('certificates.k8s.io');
  const rest = new RestClient({ server: h.server.url, ca: Buffer.from(h.server.ca), token: 't', qps: 0 });
  const { resources, failed } = await discoverPreferredResources(rest);
  expect(failed).toEqual([]);
  expect(resources.filter((r) => r.resource === 'certificatesigningrequests').map((r) => r.group)).toEqual([
    'certificates.platform',
  ]);
  expect(resources.filter((r) => r.group.endsWith('.k8s.io'))).toEqual([]);
  expect(resources.some((r) => r.group === 'apps' && r.resource === 'deployments')).toBe(true);
});
