import {
  type Endpoints,
  EndpointsKind,
  isNotFound,
  NamespaceKind,
  type Pod,
  PodKind,
  ServiceKind,
} from '@platform/api';

import { type ControllerHarness, startControllerHarness, waitFor } from '../../testing/harness';
import { endpointController, LAST_CHANGE_TRIGGER_TIME } from './index';

jest.setTimeout(90_000);

let h: ControllerHarness;
let stop: () => Promise<void>;
const NS = 'ep';

beforeAll(async () => {
  h = await startControllerHarness();
  await h.client.resource(NamespaceKind).create({ metadata: { name: NS } });
  stop = h.start(endpointController, (o) => (o.batchPeriodMs = 50));
});

afterAll(async () => {
  await h?.stop();
});

const pods = () => h.client.resource(PodKind, NS);
const services = () => h.client.resource(ServiceKind, NS);
const endpoints = () => h.client.resource(EndpointsKind, NS);

/** Creates a pod, then reports it running on `node` with `ip` (as its node agent would, through pods/status). */
async function runningPod(name: string, labels: Record<string, string>, ip: string, ready: boolean): Promise<Pod> {
  const p = await pods().create({
    metadata: { name, labels },
    spec: {
      nodeName: 'n1',
      containers: [{ name: 'c', image: 'busybox', ports: [{ name: 'http', containerPort: 8080 }] }],
    },
  } as Pod);
  return setReady(p, ip, ready);
}

async function setReady(p: Pod, ip: string, ready: boolean): Promise<Pod> {
  const cur = await pods().get(p.metadata!.name!);
  return pods().updateStatus({
    ...cur,
    status: {
      phase: 'Running',
      podIP: ip,
      podIPs: [{ ip }],
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: new Date().toISOString() }],
    },
  } as Pod);
}

async function getEndpoints(name: string): Promise<Endpoints | undefined> {
  try {
    return await endpoints().get(name);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

const ips = (as: { ip: string }[] | undefined): string[] => (as ?? []).map((a) => a.ip).sort();

test('ready and not-ready pods, ports by name, labels and the trigger time; a pod turning ready moves over', async () => {
  await runningPod('a', { app: 'web' }, '10.0.0.1', true);
  await runningPod('b', { app: 'web' }, '10.0.0.2', false);
  await runningPod('other', { app: 'db' }, '10.0.0.3', true);
  await services().create({
    metadata: { name: 'web', labels: { tier: 'front' } },
    spec: {
      selector: { app: 'web' },
      ports: [
        { name: 'http', port: 80, targetPort: 'http' },
        { name: 'admin', port: 81, targetPort: 9090 },
      ],
    },
  });
  let ep: Endpoints | undefined;
  await waitFor('the Endpoints of web', async () => {
    ep = await getEndpoints('web');
    return ips(ep?.subsets?.[0]?.addresses).length === 1 && ips(ep?.subsets?.[0]?.notReadyAddresses).length === 1;
  });
  expect(ep!.subsets).toHaveLength(1);
  const s = ep!.subsets![0]!;
  expect(ips(s.addresses)).toEqual(['10.0.0.1']);
  expect(ips(s.notReadyAddresses)).toEqual(['10.0.0.2']);
  expect(s.addresses![0]).toMatchObject({ nodeName: 'n1', targetRef: { kind: 'Pod', name: 'a', namespace: NS } });
  expect([...(s.ports ?? [])].sort((x, y) => x.port - y.port)).toEqual([
    { name: 'http', port: 8080, protocol: 'TCP' },
    { name: 'admin', port: 9090, protocol: 'TCP' },
  ]);
  expect(ep!.metadata?.labels).toEqual({ tier: 'front' });
  expect(ep!.metadata?.annotations?.[LAST_CHANGE_TRIGGER_TIME]).toMatch(/^\d{4}-/);

  await setReady(await pods().get('b'), '10.0.0.2', true);
  await waitFor('b to be ready in the Endpoints', async () => {
    const e = await getEndpoints('web');
    return ips(e?.subsets?.[0]?.addresses).join() === '10.0.0.1,10.0.0.2' && !e?.subsets?.[0]?.notReadyAddresses;
  });

  // A pod deleted leaves the Endpoints.
  await pods().delete('a', { gracePeriodSeconds: 0 });
  await waitFor(
    'a to leave',
    async () => ips((await getEndpoints('web'))?.subsets?.[0]?.addresses).join() === '10.0.0.2',
  );

  // Deleting the Service deletes its Endpoints.
  await services().delete('web');
  await waitFor('the Endpoints to go', async () => (await getEndpoints('web')) === undefined);
});

test('publishNotReadyAddresses lists not-ready pods as ready; headless services carry hostnames and no ports', async () => {
  await runningPod('p1', { app: 'pub' }, '10.0.1.1', false);
  await services().create({
    metadata: { name: 'pub' },
    spec: { selector: { app: 'pub' }, publishNotReadyAddresses: true, ports: [{ port: 53, protocol: 'UDP' }] },
  });
  await waitFor('pub to list p1 as ready', async () => {
    const e = await getEndpoints('pub');
    return ips(e?.subsets?.[0]?.addresses).join() === '10.0.1.1';
  });
  expect((await getEndpoints('pub'))!.subsets![0]!.ports).toEqual([{ port: 53, protocol: 'UDP' }]);

  const hp = await pods().create({
    metadata: { name: 'h0', labels: { app: 'hl' } },
    spec: { hostname: 'h0', subdomain: 'hl', containers: [{ name: 'c', image: 'busybox' }] },
  } as Pod);
  await setReady(hp, '10.0.2.1', true);
  await services().create({ metadata: { name: 'hl' }, spec: { selector: { app: 'hl' }, clusterIP: 'None' } });
  await waitFor('the headless Endpoints', async () => {
    const e = await getEndpoints('hl');
    return e?.subsets?.[0]?.addresses?.[0]?.hostname === 'h0';
  });
  const e = (await getEndpoints('hl'))!;
  expect(e.subsets![0]!.ports).toBeUndefined();
  expect(e.metadata?.labels).toEqual({ 'service.kubernetes.io/headless': '' });
});

test('Services without a selector keep their own Endpoints; Endpoints of a Service deleted while stopped go', async () => {
  await services().create({ metadata: { name: 'manual' }, spec: { ports: [{ port: 80 }] } });
  await endpoints().create({
    metadata: { name: 'manual' },
    subsets: [{ addresses: [{ ip: '192.0.2.1' }], ports: [{ port: 80 }] }],
  } as Endpoints);
  await services().create({ metadata: { name: 'gone' }, spec: { selector: { app: 'gone' }, ports: [{ port: 80 }] } });
  await waitFor('the Endpoints of gone', async () => (await getEndpoints('gone')) !== undefined);
  // Stopped, the controller misses the deletion; started again, it removes the leftover Endpoints.
  await stop();
  await services().delete('gone');
  stop = h.start(endpointController);
  await waitFor('the leftover Endpoints to go', async () => (await getEndpoints('gone')) === undefined);
  expect(ips((await getEndpoints('manual'))?.subsets?.[0]?.addresses)).toEqual(['192.0.2.1']);
  expect(h.errors).toEqual([]);
});
