import {
  type EndpointSlice,
  EndpointSliceKind,
  NamespaceKind,
  NodeKind,
  type Pod,
  PodKind,
  ServiceKind,
} from '@platform/api';

import { type ControllerHarness, startControllerHarness, waitFor } from '../../testing/harness';
import { CONTROLLER_NAME, endpointSliceController, MANAGED_BY_LABEL, SERVICE_NAME_LABEL } from './index';

jest.setTimeout(90_000);

let h: ControllerHarness;
const NS = 'eps';

beforeAll(async () => {
  h = await startControllerHarness();
  await h.client.resource(NamespaceKind).create({ metadata: { name: NS } });
  await h.client
    .resource(NodeKind)
    .create({ metadata: { name: 'n1', labels: { 'topology.kubernetes.io/zone': 'z1' } } });
  h.start(endpointSliceController, (o) => {
    o.maxEndpointsPerSlice = 2;
    o.batchPeriodMs = 50;
    o.terminatingCondition = true;
  });
});

afterAll(async () => {
  await h?.stop();
});

const pods = () => h.client.resource(PodKind, NS);
const services = () => h.client.resource(ServiceKind, NS);

async function runningPod(name: string, labels: Record<string, string>, ip: string, ready: boolean): Promise<Pod> {
  const p = await pods().create({
    metadata: { name, labels },
    spec: {
      nodeName: 'n1',
      containers: [{ name: 'c', image: 'busybox', ports: [{ name: 'http', containerPort: 8080 }] }],
    },
  } as Pod);
  return pods().updateStatus({
    ...p,
    status: {
      phase: 'Running',
      podIP: ip,
      podIPs: [{ ip }],
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
    },
  } as Pod);
}

async function slicesOf(svc: string): Promise<EndpointSlice[]> {
  return (await h.client.resource(EndpointSliceKind, NS).list({ labelSelector: `${SERVICE_NAME_LABEL}=${svc}` })).items;
}

const addrs = (ss: EndpointSlice[]): string[] =>
  ss.flatMap((s) => (s.endpoints ?? []).flatMap((e) => e.addresses)).sort();

test('slices list the selected pods with conditions, split by --max-endpoints-per-slice, labelled and owned', async () => {
  await services().create({
    metadata: { name: 'web', labels: { tier: 'front' } },
    spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
  });
  // No pods yet: one empty placeholder slice.
  await waitFor('the placeholder slice', async () => (await slicesOf('web')).length === 1);
  expect((await slicesOf('web'))[0]!.endpoints ?? []).toEqual([]);

  await runningPod('a', { app: 'web' }, '10.1.0.1', true);
  await runningPod('b', { app: 'web' }, '10.1.0.2', false);
  await runningPod('c', { app: 'web' }, '10.1.0.3', true);
  await waitFor('three endpoints in two slices', async () => {
    const ss = await slicesOf('web');
    return addrs(ss).join() === '10.1.0.1,10.1.0.2,10.1.0.3' && ss.length === 2;
  });
  const ss = await slicesOf('web');
  for (const s of ss) {
    expect(s.metadata?.labels).toEqual({
      tier: 'front',
      [SERVICE_NAME_LABEL]: 'web',
      [MANAGED_BY_LABEL]: CONTROLLER_NAME,
    });
    expect(s.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'Service', name: 'web', controller: true });
    expect(s.ports).toEqual([{ name: 'http', port: 8080, protocol: 'TCP' }]);
    expect(s.addressType).toBe('IPv4');
  }
  const byAddr = new Map(ss.flatMap((s) => s.endpoints ?? []).map((e) => [e.addresses[0], e]));
  expect(byAddr.get('10.1.0.1')).toMatchObject({
    conditions: { ready: true, serving: true, terminating: false },
    nodeName: 'n1',
    zone: 'z1',
    targetRef: { kind: 'Pod', name: 'a' },
  });
  expect(byAddr.get('10.1.0.2')!.conditions).toEqual({ ready: false, serving: false, terminating: false });

  // Removing pods empties a slice, which is deleted; the others keep their endpoints.
  await pods().delete('a', { gracePeriodSeconds: 0 });
  await pods().delete('b', { gracePeriodSeconds: 0 });
  await waitFor('one endpoint left in one slice', async () => {
    const left = await slicesOf('web');
    return left.length === 1 && addrs(left).join() === '10.1.0.3';
  });

  // Deleting the Service deletes its slices.
  await services().delete('web');
  await waitFor('the slices to go', async () => (await slicesOf('web')).length === 0);
});

test('Services without a selector get no slices from this controller', async () => {
  await services().create({ metadata: { name: 'manual' }, spec: { ports: [{ port: 80 }] } });
  await services().create({ metadata: { name: 'marker' }, spec: { selector: { app: 'none' }, ports: [{ port: 80 }] } });
  await waitFor('the marker placeholder', async () => (await slicesOf('marker')).length === 1);
  expect(await slicesOf('manual')).toEqual([]);
  expect(h.errors).toEqual([]);
});
