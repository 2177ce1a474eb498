/**
 * The repair pass of the Service store on real SQLite: a bitmap that lost what services hold is rebuilt from them,
 * and an address allocated but never used (a crash between allocation and write) comes back after three passes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type ApiObject, builtinScheme, jsonCodec, ProtobufCodec, type Service, ServiceKind } from '@platform/api';

import { SqliteStore } from '../../../storage/sqlite/sqlite-store';
import { StoreStorage } from '../../../storage/storage';
import { selectionPredicate } from '../../generic/predicate';
import { type RequestContext } from '../../rest/rest';
import { cidrRange, portRange, RangeAllocator } from './allocator';
import { ServiceStore } from './storage';
import { serviceStrategy } from './strategy';

const ctx: RequestContext = { namespace: 'default', now: () => Date.parse('2026-11-24T00:00:00Z') };
const IPS = '/registry/ranges/serviceips';
const PORTS = '/registry/ranges/servicenodeports';

let dir: string;
let store: SqliteStore;
let ranges: StoreStorage;
let services: ServiceStore;

function serviceStore(range: string): ServiceStore {
  const strategy = serviceStrategy(ServiceKind);
  return new ServiceStore(
    {
      kind: ServiceKind,
      keyPrefix: '/registry/services',
      storage: new StoreStorage(store, new ProtobufCodec(builtinScheme())),
      createStrategy: strategy,
      updateStrategy: strategy,
      predicate: (o) => selectionPredicate(ServiceKind, o),
    },
    {
      clusterIPs: [new RangeAllocator(cidrRange(range), ranges, IPS, 'serviceips')],
      nodePorts: new RangeAllocator(portRange('30000-30009'), ranges, PORTS, 'servicenodeports'),
    },
  );
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'service-repair-'));
  store = await SqliteStore.open(join(dir, 'state.db'));
  ranges = new StoreStorage(store, jsonCodec);
  services = serviceStore('10.7.0.0/29');
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const svc = (name: string, spec: Service['spec'] = {}): ApiObject =>
  ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name },
    spec: { ports: [{ port: 80, protocol: 'TCP' }], ...spec },
  }) as ApiObject;

const create = async (obj: ApiObject): Promise<Service> =>
  (await services.create(ctx, obj, undefined, { dryRun: false })) as Service;

it('marks again the addresses and ports services hold when the bitmaps lost them', async () => {
  const a = await create(svc('a', { type: 'NodePort' }));
  await ranges.delete(IPS);
  await ranges.delete(PORTS);
  const report = await services.repairAllocations(ctx);
  expect(report.marked.sort()).toEqual([a.spec!.clusterIP, String(a.spec!.ports![0]!.nodePort)].sort());
  await expect(create(svc('b', { clusterIP: a.spec!.clusterIP! }))).rejects.toThrow('provided IP is already allocated');
  // A second pass finds nothing to do.
  expect(await services.repairAllocations(ctx)).toEqual({ marked: [], released: [], outOfRange: [] });
});

it('releases an address allocated but never used, after three passes', async () => {
  const leaked = '10.7.0.6';
  await new RangeAllocator(cidrRange('10.7.0.0/29'), ranges, IPS, 'serviceips').allocate(leaked);
  expect((await services.repairAllocations(ctx)).released).toEqual([]);
  expect((await services.repairAllocations(ctx)).released).toEqual([]);
  await expect(create(svc('early', { clusterIP: leaked }))).rejects.toThrow('provided IP is already allocated');
  expect((await services.repairAllocations(ctx)).released).toEqual([leaked]);
  expect((await create(svc('c', { clusterIP: leaked }))).spec?.clusterIP).toBe(leaked);
});

it('reports services holding addresses outside the configured range', async () => {
  await create(svc('d'));
  // The range shrinks under the service (a new --service-cluster-ip-range).
  const moved = serviceStore('10.9.0.0/29');
  expect((await moved.repairAllocations(ctx)).outOfRange).toEqual([
    expect.stringMatching(/^default\/d: 10\.7\.0\.\d$/),
  ]);
});
