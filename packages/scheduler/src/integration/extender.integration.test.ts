/**
 * Scheduler extenders against a real HTTP extender on 127.0.0.1 and the real API server (in-process, SQLite):
 * 1.21's JSON for filter (whole nodes, or names when the extender caches nodes), prioritize, preempt and bind; an
 * ignorable extender that fails is skipped; the extenders' reasons end up in the FailedScheduling message. Also the
 * validation of the `extenders` section and the resources it makes NodeResourcesFit ignore.
 */
import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type ApiObject, fieldErrorToString, NodeKind, type Pod, PodKind } from '@platform/api';
import { startTestServer, type TestServer } from '@platform/apiserver';
import { Clientset, type ResourceClient, RestClient } from '@platform/client';
import { LeaderElectionOptions } from '@platform/common';

import { applyDefaults, extenderConfigsOf, validateConfiguration } from '../config/config';
import { buildConfiguration, profilesOf } from '../config/build';
import { SchedulerOptions } from '../cmd/options';
import { HTTPExtender } from '../extender/http-extender';
import { inTreeRegistry } from '../plugins/registry';
import { resolveProfile } from '../config/profile';
import { Scheduler } from '../scheduler';
import { makeNode, makePod } from '../testing/objects';
import { waitFor } from '../testing/wait-for';

let ts: TestServer;
let clientset: Clientset;
let extender: Server;
let url: string;
let stop: AbortController;
let run: Promise<void>;
let extenders: HTTPExtender[];
/** The bodies the extender received, by verb. */
const received = new Map<string, Record<string, unknown>[]>();
const GPU = 'example.com/gpu';

type Args = {
  pod: Pod;
  nodes: { items: { metadata: { name: string } }[] } | null;
  nodenames: string[] | null;
  nodeNameToVictims?: Record<string, { pods: Pod[]; numPDBViolations: number }>;
};

/** The extender: one handler per verb (the path), answering 1.21's JSON. */
async function answer(verb: string, body: Record<string, unknown>): Promise<[number, unknown]> {
  received.set(verb, [...(received.get(verb) ?? []), body]);
  const a = body as unknown as Args;
  const labels = a.pod?.metadata?.labels ?? {};
  const names = a.nodenames ?? a.nodes?.items.map((n) => n.metadata.name) ?? [];
  switch (verb) {
    case 'a/filter': {
      // Drops n3 always, every node for pods labelled ext=none.
      const drop = labels.ext === 'none' ? names : names.filter((n) => n === 'n3');
      const failedNodes = Object.fromEntries(
        drop.map((n) => [n, labels.ext === 'none' ? 'extender rejects the pod' : 'node(s) reserved by the extender']),
      );
      return [200, { nodes: { items: a.nodes?.items.filter((n) => !drop.includes(n.metadata.name)) }, failedNodes }];
    }
    case 'a/prioritize':
      return [200, names.map((host) => ({ host, score: host === labels.prefer ? 10 : 0 }))];
    case 'a/preempt': {
      const keep = Object.entries(a.nodeNameToVictims ?? {}).filter(([n]) => n === labels['preempt-on']);
      return [
        200,
        {
          nodeNameToMetaVictims: Object.fromEntries(
            keep.map(([n, v]) => [
              n,
              { pods: v.pods.map((p) => ({ uid: p.metadata?.uid })), numPDBViolations: v.numPDBViolations },
            ]),
          ),
        },
      ];
    }
    case 'gpu/filter':
      return [200, { nodenames: names.filter((n) => n === 'n1'), failedNodes: {} }];
    case 'gpu/bind': {
      const b = body as { podName: string; podNamespace: string; podUID: string; node: string };
      await clientset.resource(PodKind, b.podNamespace).createSubresource(b.podName, 'binding', {
        apiVersion: 'v1',
        kind: 'Binding',
        metadata: { name: b.podName, namespace: b.podNamespace, uid: b.podUID },
        target: { kind: 'Node', name: b.node },
      } as ApiObject);
      return [200, {}];
    }
    default:
      return [500, { error: 'broken' }];
  }
}

const pods = (): ResourceClient => clientset.resource(PodKind, 'default') as unknown as ResourceClient;
const get = async (name: string): Promise<Pod> => (await pods().get(name)) as Pod;
const bound = (name: string): Promise<string> => waitFor(`${name} bound`, async () => (await get(name)).spec?.nodeName);

beforeAll(async () => {
  extender = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const verb = (req.url ?? '').replace(/^\/+/, '');
      answer(verb, JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>).then(
        ([code, out]) => {
          res.writeHead(code, { 'Content-Type': 'application/json' });
          res.end(JSON.stringify(out));
        },
        (err: Error) => {
          res.writeHead(500);
          res.end(err.message);
        },
      );
    });
  });
  await new Promise<void>((r) => extender.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(extender.address() as AddressInfo).port}`;
  ts = await startTestServer();
  clientset = new Clientset(new RestClient({ server: ts.url, ca: Buffer.from(ts.ca), token: 't', qps: 0 }));
  for (const n of ['n1', 'n2', 'n3']) await clientset.resource(NodeKind).create(makeNode(n) as ApiObject);
  extenders = [
    new HTTPExtender({ urlPrefix: `${url}/broken`, filterVerb: 'filter', ignorable: true }),
    new HTTPExtender({
      urlPrefix: `${url}/a/`,
      filterVerb: 'filter',
      prioritizeVerb: 'prioritize',
      preemptVerb: 'preempt',
      weight: 5,
      httpTimeoutMs: 30_000,
    }),
    new HTTPExtender({
      urlPrefix: `${url}/gpu`,
      filterVerb: 'filter',
      bindVerb: 'bind',
      nodeCacheCapable: true,
      managedResources: [{ name: GPU, ignoredByScheduler: true }],
    }),
  ];
  const profile = resolveProfile({});
  profile.pluginConfig.set('NodeResourcesFit', { ignoredResources: [GPU] });
  const scheduler = new Scheduler({
    clientset,
    profiles: [profile],
    extenders,
    podInitialBackoffMs: 100,
    podMaxBackoffMs: 200,
  });
  stop = new AbortController();
  run = scheduler.run(stop.signal);
}, 120_000);

afterAll(async () => {
  stop?.abort();
  await run;
  for (const e of extenders ?? []) e.close();
  clientset?.rest.close();
  await ts?.stop();
  await new Promise((r) => extender?.close(r));
});

it("drops the nodes the extender filters out and adds its weighted scores, past an ignorable extender's error", async () => {
  await pods().create(makePod('preferring', { cpu: '100m', labels: { prefer: 'n2' } }) as ApiObject);
  expect(await bound('preferring')).toBe('n2');
  const args = (received.get('a/filter') ?? [])[0] as unknown as Args;
  expect(args.pod.metadata?.name).toBe('preferring');
  expect(args.nodes?.items.map((n) => n.metadata.name).sort()).toEqual(['n1', 'n2', 'n3']);
  expect(args.nodenames).toBeNull();
  expect((received.get('a/prioritize') ?? []).length).toBeGreaterThan(0);
  expect((received.get('broken/filter') ?? []).length).toBeGreaterThan(0);
  // Not interested: the pod asks for none of its managed resources.
  expect(received.get('gpu/filter')).toBeUndefined();
}, 60_000);

it("counts the extender's reasons in the FailedScheduling message", async () => {
  await pods().create(makePod('refused', { labels: { ext: 'none' } }) as ApiObject);
  const message = await waitFor('refused unschedulable', async () => {
    const c = (await get('refused')).status?.conditions?.find((x) => x.type === 'PodScheduled');
    return c?.reason === 'Unschedulable' ? c.message : undefined;
  });
  expect(message).toBe('0/3 nodes are available: 3 extender rejects the pod.');
  await pods().delete('refused');
}, 60_000);

it('lets the binder extender bind the pods asking for its resource, with node names only', async () => {
  const gpuPod = makePod('gpu');
  (gpuPod.spec?.containers ?? [])[0]!.resources = { requests: { [GPU]: '1' }, limits: { [GPU]: '1' } };
  await pods().create(gpuPod as ApiObject);
  expect(await bound('gpu')).toBe('n1');
  const f = (received.get('gpu/filter') ?? [])[0] as unknown as Args;
  expect(f.nodes).toBeNull();
  expect([...(f.nodenames ?? [])].sort()).toEqual(['n1', 'n2']);
  expect(received.get('gpu/bind')).toEqual([
    { podName: 'gpu', podNamespace: 'default', podUID: (await get('gpu')).metadata?.uid, node: 'n1' },
  ]);
}, 60_000);

it('preempts only where the preemption extender accepts the victims', async () => {
  for (const n of ['n1', 'n2'])
    await pods().create(
      makePod(`filler-${n}`, {
        cpu: '3',
        priority: 10,
        spec: { nodeSelector: { 'kubernetes.io/hostname': n }, terminationGracePeriodSeconds: 0 },
      }) as ApiObject,
    );
  for (const n of ['n1', 'n2']) await bound(`filler-${n}`);
  await pods().create(makePod('urgent', { cpu: '3', priority: 100, labels: { 'preempt-on': 'n2' } }) as ApiObject);
  expect(await bound('urgent')).toBe('n2');
  const remaining = ((await pods().list()).items as Pod[]).map((p) => p.metadata?.name);
  expect(remaining).toContain('filler-n1');
  expect(remaining).not.toContain('filler-n2');
  const pre = (received.get('a/preempt') ?? [])[0] as unknown as Args;
  expect(Object.keys(pre.nodeNameToVictims ?? {})).toEqual(expect.arrayContaining(['n1', 'n2']));
  expect(pre.nodeNameToVictims?.n1?.pods.map((p) => p.metadata?.name)).toEqual(['filler-n1']);
}, 60_000);

describe('the extenders section', () => {
  const errors = (extenders: unknown): string[] =>
    validateConfiguration(
      applyDefaults({
        apiVersion: 'kubescheduler.config.platform/v1beta1',
        kind: 'KubeSchedulerConfiguration',
        extenders,
      }),
    ).map(fieldErrorToString);

  it('accepts 1.21 fields and refuses what 1.21 refuses, naming the field', () => {
    expect(
      errors([
        {
          urlPrefix: 'https://127.0.0.1:1/x',
          filterVerb: 'filter',
          prioritizeVerb: 'prioritize',
          weight: 2,
          bindVerb: 'bind',
          enableHTTPS: true,
          tlsConfig: { insecure: true },
          httpTimeout: '10s',
          nodeCacheCapable: true,
          managedResources: [{ name: GPU, ignoredByScheduler: true }],
          ignorable: false,
        },
      ]),
    ).toEqual([]);
    expect(
      errors([
        { urlPrefix: 'http://a', prioritizeVerb: 'p', bindVerb: 'b', managedResources: [{ name: 'cpu' }] },
        { urlPrefix: 'ftp://b', bindVerb: 'b', httpTimeout: 'soon', managedResources: [{ name: GPU }, { name: GPU }] },
        { filterVerb: 'f', surprise: 1 },
      ]),
    ).toEqual([
      'extenders[0].weight: Invalid value: 0: must have a positive weight applied to it',
      'extenders[0].managedResources[0].name: Invalid value: "cpu": is an invalid extended resource name',
      'extenders[1].urlPrefix: Invalid value: "ftp://b": must be an http or https URL',
      'extenders[1].httpTimeout: Invalid value: "soon": must be a duration such as 30s',
      'extenders[1].managedResources[1].name: Invalid value: "example.com/gpu": duplicate extender managed resource name',
      expect.stringMatching(/^extenders\[2\]\.surprise: Unsupported value: "surprise"/),
      'extenders[2].urlPrefix: Required value',
      'extenders: Invalid value: "found 2 extenders implementing bind": only one extender can implement bind',
    ]);
  });

  it('parses httpTimeout and makes NodeResourcesFit ignore the resources ignoredByScheduler', () => {
    const dir = mkdtempSync(join(tmpdir(), 'extender-config-'));
    try {
      const file = join(dir, 'config.yaml');
      writeFileSync(
        file,
        [
          'apiVersion: kubescheduler.config.platform/v1beta1',
          'kind: KubeSchedulerConfiguration',
          'extenders:',
          '  - urlPrefix: http://127.0.0.1:1/x',
          '    httpTimeout: 1m30s',
          `    managedResources: [{ name: ${GPU}, ignoredByScheduler: true }]`,
          '',
        ].join('\n'),
      );
      const registry = inTreeRegistry();
      const eff = buildConfiguration(
        { ...new SchedulerOptions().f, config: file },
        new LeaderElectionOptions('scheduler').config,
        registry,
      );
      expect(extenderConfigsOf(eff.config)[0]?.httpTimeoutMs).toBe(90_000);
      expect(profilesOf(eff, registry)[0]?.pluginConfig.get('NodeResourcesFit')).toEqual({ ignoredResources: [GPU] });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
