/**
 * What a new user does first, on the whole local cluster: `platform up` (what `npm start` runs) with every daemon as
 * its own process, then Debian's kubectl 1.20: a Deployment ends with running containers (the node agent's builtin
 * runtime here), scales, rolls out a new template, rolls back, is deleted with each cascade, and its namespace goes.
 * `platform status`, `logs` and a second `up` on the same directory are checked on the running cluster.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

import { freePort } from '@platform/apiserver';

import { ensureKubectl, kubectl, type KubectlResult } from './support/kubectl';
import { type Daemon, ROOT, startDaemon, waitFor } from './support/process';

let dir: string;
let stateDir: string;
let kubeconfig: string;
let cluster: Daemon;

const PLATFORM = join(ROOT, 'packages', 'cluster', 'bin', 'platform');
const platform = (args: string[]): { status: number | null; stdout: string; stderr: string } => {
  const r = spawnSync(process.execPath, [PLATFORM, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
};

beforeAll(async () => {
  ensureKubectl();
  dir = mkdtempSync(join(tmpdir(), 'cluster-e2e-'));
  stateDir = join(dir, '.platform');
  const port = await freePort();
  cluster = startDaemon('cluster', 'platform', [
    'up',
    `--dir=${stateDir}`,
    `--port=${port}`,
    '--node-name=e2e-node',
    '--container-runtime=builtin',
    // Other cluster tests may run at the same time: no daemon on its default port.
    '--random-ports',
  ]);
  kubeconfig = join(stateDir, 'admin.conf');
  await waitFor(
    'platform up to print that the cluster is running',
    async () => cluster.output().includes('platform is running.'),
    240_000,
  ).catch((err: Error) => {
    throw new Error(`${err.message}\n${cluster.output()}`);
  });
}, 300_000);

afterAll(async () => {
  if (cluster) {
    const code = await cluster.stop('SIGINT');
    expect(cluster.output()).toContain('platform: stopped.');
    expect(code).toBe(0);
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 120_000);

function ok(r: KubectlResult): string {
  if (r.status !== 0) throw new Error(`kubectl failed (${String(r.status)}): ${r.stderr}`);
  return r.stdout;
}

const k = (args: string[], input?: string): KubectlResult => kubectl(kubeconfig, args, input);

interface PodView {
  name: string;
  phase: string;
  ready: boolean;
  image: string;
  node: string;
  deleting: boolean;
}

function pods(ns: string, selector: string): PodView[] {
  const r = k(['get', 'pods', '-n', ns, '-l', selector, '-o', 'json']);
  if (r.status !== 0) return [];
  const list = JSON.parse(r.stdout) as {
    items: {
      metadata: { name: string; deletionTimestamp?: string };
      spec: { nodeName?: string; containers: { image: string }[] };
      status: { phase?: string; conditions?: { type: string; status: string }[] };
    }[];
  };
  return list.items.map((p) => ({
    name: p.metadata.name,
    phase: p.status.phase ?? '',
    ready: (p.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
    image: p.spec.containers[0]?.image ?? '',
    node: p.spec.nodeName ?? '',
    deleting: !!p.metadata.deletionTimestamp,
  }));
}

/** Waits until exactly `n` pods of the selector run, ready, on the node, with `image`, and no other pod is left. */
async function runningPods(ns: string, selector: string, n: number, image: string): Promise<PodView[]> {
  let last: PodView[] = [];
  await waitFor(
    `${n} running pods of ${selector} with ${image}`,
    async () => {
      last = pods(ns, selector);
      return (
        last.length === n &&
        last.every((p) => p.phase === 'Running' && p.ready && p.image === image && p.node === 'e2e-node' && !p.deleting)
      );
    },
    180_000,
  ).catch((err: Error) => {
    throw new Error(`${err.message}; last seen: ${JSON.stringify(last)}`);
  });
  return last;
}

it('lists every daemon as healthy in platform status', async () => {
  // One status that shows them all healthy: a probe can time out on a loaded machine, so a second call is no proof.
  let last = '';
  await waitFor(
    'every daemon healthy in one platform status',
    async () => {
      const r = platform(['status', `--dir=${stateDir}`]);
      last = r.stdout + r.stderr;
      return (
        r.status === 0 &&
        ['apiserver', 'controller-manager', 'scheduler', 'node-agent', 'metrics-server'].every((d) =>
          new RegExp(`^${d}\\s+pid \\d+\\s+healthy`, 'm').test(r.stdout),
        )
      );
    },
    120_000,
  ).catch((err: Error) => {
    throw new Error(`${err.message}; platform status said:\n${last}`);
  });
}, 180_000);

it('refuses a second cluster on the same directory, and names the running one', () => {
  const r = platform(['up', `--dir=${stateDir}`, '--port=1']);
  expect(r.status).toBe(1);
  expect(r.stderr).toContain('belongs to a running cluster');
});

it('shows a daemon log, and names the daemons when asked for an unknown one', () => {
  const r = platform(['logs', 'apiserver', `--dir=${stateDir}`, '--no-follow']);
  expect(r.status).toBe(0);
  expect(r.stdout).toContain('starting apiserver');
  const bad = platform(['logs', 'nope', `--dir=${stateDir}`, '--no-follow']);
  expect(bad.status).toBe(1);
  expect(bad.stderr).toMatch(/there are: .*apiserver/);
});

it('registers its node as Ready', async () => {
  await waitFor(
    'node e2e-node Ready',
    async () => {
      const r = k(['get', 'node', 'e2e-node', '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}']);
      return r.status === 0 && r.stdout.trim() === 'True';
    },
    120_000,
  );
}, 180_000);

/** A GET of the node agent's `/pods`: its status code, with or without a client certificate; the agent's certificate is checked. */
function agentGet(port: number, client?: { cert: string; key: string }): Promise<number> {
  const pki = join(stateDir, 'pki');
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port,
        path: '/pods',
        // The agent serves a certificate of the cluster CA, issued for 127.0.0.1.
        ca: readFileSync(join(pki, 'ca.crt')),
        ...(client ? { cert: readFileSync(client.cert), key: readFileSync(client.key) } : {}),
        agent: false,
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

it('serves kubectl logs and exec through the node agent, which refuses anonymous requests', async () => {
  // A pod needs its namespace's default ServiceAccount, which the controller manager makes once it leads.
  await waitFor(
    'the default service account',
    async () => k(['get', 'serviceaccount', 'default']).status === 0,
    120_000,
  );
  ok(k(['run', 'hello', '--image=busybox', '--', 'sh', '-c', 'echo hello-from-pod; sleep 3600']));
  await waitFor(
    'pod hello Running',
    async () => k(['get', 'pod', 'hello', '-o', 'jsonpath={.status.phase}']).stdout.trim() === 'Running',
    180_000,
  );
  // The API server reaches the agent with its own client certificate (--agent-client-certificate).
  await waitFor('kubectl logs hello', async () => k(['logs', 'hello']).stdout.includes('hello-from-pod'), 60_000);
  expect(ok(k(['exec', 'hello', '--', 'echo', 'exec-ok'])).trim()).toBe('exec-ok');

  const port = Number(
    ok(k(['get', 'node', 'e2e-node', '-o', 'jsonpath={.status.daemonEndpoints.kubeletEndpoint.Port}'])).trim(),
  );
  expect(port).toBeGreaterThan(0);
  // No anonymous requests: a secure kubelet's --anonymous-auth=false.
  expect(await agentGet(port)).toBe(401);
  // The API server's certificate (a cluster administrator's, checked by the agent through a SubjectAccessReview).
  const pki = join(stateDir, 'pki');
  expect(
    await agentGet(port, {
      cert: join(pki, 'apiserver-agent-client.crt'),
      key: join(pki, 'apiserver-agent-client.key'),
    }),
  ).toBe(200);
  ok(k(['delete', 'pod', 'hello', '--wait=false']));
}, 300_000);

it('runs a Deployment to running containers, scales it, rolls it out and back, and deletes it', async () => {
  ok(k(['create', 'namespace', 'shop']));
  ok(k(['create', 'deployment', 'web', '-n', 'shop', '--image=busybox', '--replicas=3', '--', 'sleep', '3600']));
  await runningPods('shop', 'app=web', 3, 'busybox');

  ok(k(['scale', 'deployment', 'web', '-n', 'shop', '--replicas=5']));
  await runningPods('shop', 'app=web', 5, 'busybox');

  ok(k(['set', 'image', 'deployment/web', '-n', 'shop', 'busybox=busybox:2']));
  const rolled = k(['rollout', 'status', 'deployment/web', '-n', 'shop', '--timeout=180s']);
  expect(ok(rolled)).toContain('successfully rolled out');
  await runningPods('shop', 'app=web', 5, 'busybox:2');
  expect(ok(k(['rollout', 'history', 'deployment/web', '-n', 'shop']))).toMatch(/^2\s/m);

  ok(k(['rollout', 'undo', 'deployment/web', '-n', 'shop']));
  expect(ok(k(['rollout', 'status', 'deployment/web', '-n', 'shop', '--timeout=180s']))).toContain(
    'successfully rolled out',
  );
  await runningPods('shop', 'app=web', 5, 'busybox');

  // Orphan: the ReplicaSet and its pods stay, without an owner.
  ok(k(['delete', 'deployment', 'web', '-n', 'shop', '--cascade=orphan']));
  await waitFor('the ReplicaSets orphaned', async () => {
    const r = k(['get', 'replicasets', '-n', 'shop', '-o', 'jsonpath={.items[*].metadata.ownerReferences}']);
    return r.status === 0 && r.stdout.trim() === '';
  });
  expect(pods('shop', 'app=web').filter((p) => !p.deleting)).toHaveLength(5);

  // Foreground: the ReplicaSet goes only after its pods.
  ok(k(['create', 'deployment', 'api', '-n', 'shop', '--image=busybox', '--replicas=2', '--', 'sleep', '3600']));
  await runningPods('shop', 'app=api', 2, 'busybox');
  ok(k(['delete', 'deployment', 'api', '-n', 'shop', '--cascade=foreground', '--timeout=180s']));
  await waitFor(
    'the api pods gone',
    async () => pods('shop', 'app=api').length === 0 && k(['get', 'deployment', 'api', '-n', 'shop']).status !== 0,
    180_000,
  );

  // The namespace goes with everything in it.
  ok(k(['delete', 'namespace', 'shop', '--wait=false']));
  await waitFor(
    'namespace shop gone',
    async () => {
      const r = k(['get', 'namespace', 'shop']);
      return r.status !== 0 && r.stderr.includes('NotFound');
    },
    180_000,
  );
}, 900_000);

it("keeps a Service's Endpoints and EndpointSlices on its ready pods, following their readiness", async () => {
  const flag = join(mkdtempSync(join(tmpdir(), 'e2e-ready-')), 'ready');
  chmodSync(dirname(flag), 0o755);
  const pod = (name: string, probe: boolean): object => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: 'ep' } },
    spec: {
      containers: [
        {
          name: 'c',
          image: 'busybox',
          command: ['sleep', '3600'],
          ...(probe ? { readinessProbe: { exec: { command: ['test', '-e', flag] }, periodSeconds: 1 } } : {}),
        },
      ],
    },
  });
  ok(k(['create', 'namespace', 'ep']));
  // Pods need the namespace's default ServiceAccount, which the controller manager creates a moment later.
  await waitFor(
    'the default ServiceAccount of ep',
    async () => k(['get', 'serviceaccount', 'default', '-n', 'ep']).status === 0,
    120_000,
  );
  const list = { apiVersion: 'v1', kind: 'List', items: [pod('steady', false), pod('flip', true)] };
  ok(k(['apply', '-n', 'ep', '-f', '-'], JSON.stringify(list)));
  ok(k(['create', 'service', 'clusterip', 'ep', '-n', 'ep', '--tcp=80:8080']));
  // `kubectl create service` selects app=<name>: both pods.
  const view = (): { ready: string[]; notReady: string[]; sliceReady: string[]; sliceNotReady: string[] } => {
    const names = (xs: { targetRef?: { name?: string } }[] | undefined): string[] =>
      (xs ?? []).map((x) => x.targetRef?.name ?? '').sort();
    const ep = JSON.parse(ok(k(['get', 'endpoints', 'ep', '-n', 'ep', '-o', 'json']))) as {
      subsets?: {
        addresses?: { targetRef?: { name?: string } }[];
        notReadyAddresses?: { targetRef?: { name?: string } }[];
      }[];
    };
    const slices = JSON.parse(
      ok(k(['get', 'endpointslices', '-n', 'ep', '-l', 'kubernetes.io/service-name=ep', '-o', 'json'])),
    ) as { items: { endpoints?: { targetRef?: { name?: string }; conditions?: { ready?: boolean } }[] }[] };
    const endpoints = slices.items.flatMap((s) => s.endpoints ?? []);
    return {
      ready: (ep.subsets ?? []).flatMap((s) => names(s.addresses)).sort(),
      notReady: (ep.subsets ?? []).flatMap((s) => names(s.notReadyAddresses)).sort(),
      sliceReady: names(endpoints.filter((e) => e.conditions?.ready === true)),
      sliceNotReady: names(endpoints.filter((e) => e.conditions?.ready !== true)),
    };
  };
  const expectView = async (what: string, ready: string[], notReady: string[]): Promise<void> => {
    let last = {};
    await waitFor(
      what,
      async () => {
        last = view();
        return JSON.stringify(last) === JSON.stringify({ ready, notReady, sliceReady: ready, sliceNotReady: notReady });
      },
      180_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}; last seen: ${JSON.stringify(last)}`);
    });
  };
  await expectView('the probed pod not ready, the other ready', ['steady'], ['flip']);
  writeFileSync(flag, '');
  chmodSync(flag, 0o644);
  await expectView('both ready once the probe passes', ['flip', 'steady'], []);
  rmSync(flag);
  await expectView('the probed pod not ready again', ['steady'], ['flip']);
  ok(k(['delete', 'namespace', 'ep', '--wait=false']));
}, 600_000);
