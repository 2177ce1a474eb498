import {
  type EndpointSlice,
  EndpointSliceKind,
  type Endpoints,
  EndpointsKind,
  NamespaceKind,
  ServiceKind,
} from '@platform/api';

import { type ControllerHarness, startControllerHarness, waitFor } from '../../testing/harness';
import { MANAGED_BY_LABEL, SERVICE_NAME_LABEL } from '../endpointslice';
import { endpointSliceMirroringController, MIRRORING_CONTROLLER_NAME, SKIP_MIRROR_LABEL } from './index';

jest.setTimeout(90_000);

let h: ControllerHarness;
const NS = 'mir';

beforeAll(async () => {
  h = await startControllerHarness();
  await h.client.resource(NamespaceKind).create({ metadata: { name: NS } });
  h.start(endpointSliceMirroringController, (o) => (o.maxEndpointsPerSubset = 2));
});

afterAll(async () => {
  await h?.stop();
});

const slicesOf = async (svc: string): Promise<EndpointSlice[]> =>
  (await h.client.resource(EndpointSliceKind, NS).list({ labelSelector: `${SERVICE_NAME_LABEL}=${svc}` })).items;
const addrs = (ss: EndpointSlice[]): string[] =>
  ss.flatMap((s) => (s.endpoints ?? []).map((e) => `${e.addresses[0]}:${e.conditions?.ready}`)).sort();

test('Endpoints of a selectorless Service are mirrored, capped per subset, and follow changes and deletion', async () => {
  const eps = h.client.resource(EndpointsKind, NS);
  await h.client
    .resource(ServiceKind, NS)
    .create({ metadata: { name: 'ext' }, spec: { ports: [{ name: 'p', port: 80 }] } });
  await eps.create({
    metadata: { name: 'ext', labels: { team: 'a' } },
    subsets: [
      {
        addresses: [{ ip: '192.0.2.1' }, { ip: '192.0.2.2' }, { ip: '192.0.2.3' }],
        ports: [{ name: 'p', port: 8080 }],
      },
      { notReadyAddresses: [{ ip: '2001:db8::1' }], ports: [{ name: 'p', port: 8080 }] },
    ],
  } as Endpoints);
  await waitFor('the mirrored slices', async () => (await slicesOf('ext')).length === 2);
  const ss = await slicesOf('ext');
  expect(addrs(ss)).toEqual(['192.0.2.1:true', '192.0.2.2:true', '2001:db8::1:false']);
  for (const s of ss) {
    expect(s.metadata?.labels).toEqual({
      team: 'a',
      [SERVICE_NAME_LABEL]: 'ext',
      [MANAGED_BY_LABEL]: MIRRORING_CONTROLLER_NAME,
    });
    expect(s.ports).toEqual([{ name: 'p', port: 8080, protocol: 'TCP' }]);
    expect(s.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'Endpoints', name: 'ext' });
  }

  const cur = await eps.get('ext');
  await eps.update({ ...cur, subsets: [{ addresses: [{ ip: '192.0.2.9' }], ports: [{ name: 'p', port: 8080 }] }] });
  await waitFor('the slices to follow', async () => addrs(await slicesOf('ext')).join() === '192.0.2.9:true');
  expect(await slicesOf('ext')).toHaveLength(1);

  // The skip label stops mirroring (and removes the slices).
  const again = await eps.get('ext');
  await eps.update({ ...again, metadata: { ...again.metadata, labels: { [SKIP_MIRROR_LABEL]: 'true' } } });
  await waitFor('the slices to go', async () => (await slicesOf('ext')).length === 0);
  expect(h.errors).toEqual([]);
});

test('Endpoints of a Service with a selector, or without a Service, are not mirrored', async () => {
  const eps = h.client.resource(EndpointsKind, NS);
  await h.client
    .resource(ServiceKind, NS)
    .create({ metadata: { name: 'sel' }, spec: { selector: { a: 'b' }, ports: [{ port: 80 }] } });
  await eps.create({
    metadata: { name: 'sel' },
    subsets: [{ addresses: [{ ip: '192.0.2.5' }], ports: [{ port: 80 }] }],
  } as Endpoints);
  await eps.create({
    metadata: { name: 'nosvc' },
    subsets: [{ addresses: [{ ip: '192.0.2.6' }], ports: [{ port: 80 }] }],
  } as Endpoints);
  // A marker that is mirrored, to know the controller has seen the others.
  await h.client.resource(ServiceKind, NS).create({ metadata: { name: 'marker' }, spec: { ports: [{ port: 80 }] } });
  await eps.create({
    metadata: { name: 'marker' },
    subsets: [{ addresses: [{ ip: '192.0.2.7' }], ports: [{ port: 80 }] }],
  } as Endpoints);
  await waitFor('the marker slice', async () => (await slicesOf('marker')).length === 1);
  expect(await slicesOf('sel')).toEqual([]);
  expect(await slicesOf('nosvc')).toEqual([]);
});
