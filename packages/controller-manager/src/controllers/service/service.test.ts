import { EventKind, NamespaceKind, ServiceKind } from '@platform/api';

import { type ControllerHarness, startControllerHarness, waitFor } from '../../testing/harness';
import { NO_CLOUD_REASON, serviceController } from './index';

jest.setTimeout(90_000);

let h: ControllerHarness;
const NS = 'svc';

beforeAll(async () => {
  h = await startControllerHarness();
  await h.client.resource(NamespaceKind).create({ metadata: { name: NS } });
  h.start(serviceController);
});

afterAll(async () => {
  await h?.stop();
});

test('a LoadBalancer Service stays pending with one Event saying why; other Services get none', async () => {
  const svcs = h.client.resource(ServiceKind, NS);
  await svcs.create({ metadata: { name: 'plain' }, spec: { ports: [{ port: 80 }] } });
  const lb = await svcs.create({ metadata: { name: 'lb' }, spec: { type: 'LoadBalancer', ports: [{ port: 80 }] } });
  const events = async () =>
    (await h.client.resource(EventKind, NS).list()).items.filter((e) => e.reason === NO_CLOUD_REASON);
  await waitFor('the Event', async () => (await events()).length > 0);
  // Updating the Service does not tell again.
  await svcs.update({
    ...(await svcs.get('lb')),
    metadata: { ...lb.metadata, resourceVersion: undefined, labels: { x: 'y' } },
  });
  await new Promise((r) => setTimeout(r, 500));
  const evs = await events();
  expect(evs).toHaveLength(1);
  expect(evs[0]!.count ?? 1).toBe(1);
  expect(evs[0]!.involvedObject).toMatchObject({ kind: 'Service', name: 'lb' });
  expect(evs[0]!.message).toMatch(/no cloud provider/);
  expect((await svcs.get('lb')).status?.loadBalancer?.ingress ?? []).toEqual([]);
  expect(h.errors).toEqual([]);
});
