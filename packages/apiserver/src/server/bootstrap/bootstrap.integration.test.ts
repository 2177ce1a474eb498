/**
 * The bootstrap post-start hooks on a real server: health check names, the default RBAC policy (and that user edits
 * survive a restart), the system priority classes, the `platform` Service and its Endpoints under each reconciler
 * (two servers on one etcd with the lease reconciler), the livez grace period and the shutdown delay.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type ClusterRole, type ClusterRoleBinding, type Endpoints, type Service, type Subject } from '@platform/api';

import { startTestServer, type TestServer } from '../../testing/test-server';
import { ApiServer, type ApiServerConfig } from '../api-server';
import { StoreFactory } from '../../storage/factory';
import { DEFAULT_STORAGE_CONFIG } from '../../storage/options';
import { startEtcd } from '../../storage/testing/etcd';

import { AUTOUPDATE_ANNOTATION, BOOTSTRAPPING_LABEL } from './rbac-policy';

const RBAC = '/apis/rbac.authorization.platform/v1';
const FAST = { intervalMs: 100 };

/** Polls `probe` until it returns a value (not undefined), or fails after `timeoutMs` with the last value seen. */
async function eventually<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function endpointIPs(ep: Endpoints | undefined): string[] {
  return (ep?.subsets ?? []).flatMap((s) => (s.addresses ?? []).map((a) => a.ip)).sort();
}

/** The addresses of the EndpointSlice mirroring the Endpoints. */
async function sliceIPs(s: TestServer): Promise<string[] | undefined> {
  const r = await s.request('GET', '/apis/discovery.platform/v1/namespaces/default/endpointslices/platform');
  if (r.status !== 200) return undefined;
  return (r.json.endpoints as { addresses: string[] }[]).flatMap((e) => e.addresses).sort();
}

async function getEndpoints(s: TestServer): Promise<Endpoints | undefined> {
  const r = await s.request('GET', '/api/v1/namespaces/default/endpoints/platform');
  return r.status === 200 ? (r.json as Endpoints) : undefined;
}

describe('bootstrap on one server', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer((c) => {
      c.bootstrap = FAST;
    });
  });
  afterAll(() => s.stop());

  it('lists every check of Document 1 in /livez and /readyz', async () => {
    const hooks = [
      'poststarthook/generic-apiserver-start-informers',
      'poststarthook/bootstrap-controller',
      'poststarthook/rbac/bootstrap-roles',
      'poststarthook/scheduling/bootstrap-system-priority-classes',
      'poststarthook/start-cluster-authentication-info-controller',
    ];
    // Other post-start hooks (of other features) may sit between these; the order of these is Kubernetes'. The
    // aggregator's boot-sequence check is looked at on its own.
    const ours = (lines: string[]): string[] =>
      lines.filter(
        (l) =>
          l !== '[+]autoregister-completion ok' &&
          (!l.startsWith('[+]poststarthook/') || hooks.some((h) => l === `[+]${h} ok`)),
      );
    const livez = await s.request('GET', '/livez?verbose');
    expect(livez.status).toBe(200);
    const livezChecks = livez.text.split('\n').filter((l) => l.startsWith('[+]'));
    expect(ours(livezChecks)).toEqual(['ping', 'log', 'store', ...hooks].map((n) => `[+]${n} ok`));
    const readyz = await s.request('GET', '/readyz?verbose');
    expect(readyz.status).toBe(200);
    const readyzChecks = readyz.text.split('\n').filter((l) => l.startsWith('[+]'));
    expect(livezChecks).toContain('[+]autoregister-completion ok');
    expect(readyzChecks).toContain('[+]autoregister-completion ok');
    expect(ours(readyzChecks)).toEqual(['ping', 'log', 'store', ...hooks, 'shutdown'].map((n) => `[+]${n} ok`));
    // The hook published how this server authenticates clients (no client CA or front proxy here: no keys).
    const info = await s.request('GET', '/api/v1/namespaces/system/configmaps/extension-apiserver-authentication');
    expect([info.status, info.json.data ?? {}]).toEqual([200, {}]);
    for (const name of ['log', 'poststarthook/rbac/bootstrap-roles']) {
      const one = await s.request('GET', `/livez/${name}`);
      expect([one.status, one.text]).toEqual([200, 'ok']);
    }
  });

  it('creates the default cluster roles with their rules, labels and annotation', async () => {
    const get = async (name: string): Promise<ClusterRole> => {
      const r = await s.request('GET', `${RBAC}/clusterroles/${encodeURIComponent(name)}`);
      expect(r.status).toBe(200);
      return r.json as ClusterRole;
    };
    const admin = await get('cluster-admin');
    expect(admin.rules).toEqual([
      { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
      { verbs: ['*'], nonResourceURLs: ['*'] },
    ]);
    expect(admin.metadata?.labels?.[BOOTSTRAPPING_LABEL.key]).toBe('rbac-defaults');
    expect(admin.metadata?.annotations?.[AUTOUPDATE_ANNOTATION]).toBe('true');

    // Aggregated roles: selectors as Kubernetes, and their rules filled in at bootstrap.
    const view = await get('view');
    expect(view.aggregationRule?.clusterRoleSelectors).toEqual([
      { matchLabels: { 'rbac.authorization.platform/aggregate-to-view': 'true' } },
    ]);
    expect(view.metadata?.labels?.['rbac.authorization.platform/aggregate-to-edit']).toBe('true');
    const allows = (r: ClusterRole, verb: string, group: string, resource: string): boolean =>
      (r.rules ?? []).some(
        (x) => x.verbs.includes(verb) && (x.apiGroups ?? []).includes(group) && (x.resources ?? []).includes(resource),
      );
    expect(allows(view, 'list', '', 'pods')).toBe(true);
    expect(allows(view, 'create', '', 'pods')).toBe(false);
    expect(allows(view, 'get', '', 'secrets')).toBe(false);
    const edit = await get('edit');
    expect(allows(edit, 'list', '', 'pods')).toBe(true); // from view
    expect(allows(edit, 'create', 'apps', 'deployments')).toBe(true);
    expect(allows(edit, 'create', 'rbac.authorization.platform', 'roles')).toBe(false);
    const nsAdmin = await get('admin');
    expect(allows(nsAdmin, 'create', 'apps', 'deployments')).toBe(true); // from edit
    expect(allows(nsAdmin, 'create', 'rbac.authorization.platform', 'roles')).toBe(true);

    const discovery = await get('system:discovery');
    expect(discovery.rules?.[0]?.nonResourceURLs).toContain('/apis/*');
    expect(allows(await get('system:platform-scheduler'), 'create', '', 'pods/binding')).toBe(true);
    expect(allows(await get('system:node'), 'update', '', 'nodes/status')).toBe(true);
    expect(allows(await get('system:controller:replicaset-controller'), 'create', '', 'pods')).toBe(true);
    const cm = await get('system:platform-controller-manager');
    expect(cm.rules).toContainEqual({
      verbs: ['get', 'update'],
      apiGroups: ['coordination.platform'],
      resources: ['leases'],
      resourceNames: ['controller-manager'],
    });
  });

  it('creates the default bindings, and the Roles and RoleBindings of the system namespaces', async () => {
    const masters = await s.request('GET', `${RBAC}/clusterrolebindings/cluster-admin`);
    expect(masters.status).toBe(200);
    expect((masters.json as ClusterRoleBinding).subjects).toEqual([
      { kind: 'Group', apiGroup: 'rbac.authorization.platform', name: 'system:masters' },
    ]);
    expect((masters.json as ClusterRoleBinding).roleRef).toEqual({
      apiGroup: 'rbac.authorization.platform',
      kind: 'ClusterRole',
      name: 'cluster-admin',
    });
    const controller = await s.request('GET', `${RBAC}/clusterrolebindings/system:controller:job-controller`);
    expect((controller.json as ClusterRoleBinding).subjects).toEqual([
      { kind: 'ServiceAccount', name: 'job-controller', namespace: 'system' },
    ]);
    const lock = await s.request(
      'GET',
      `${RBAC}/namespaces/system/roles/system::leader-locking-platform-controller-manager`,
    );
    expect(lock.status).toBe(200);
    const lockBinding = await s.request(
      'GET',
      `${RBAC}/namespaces/system/rolebindings/system::leader-locking-platform-controller-manager`,
    );
    expect(lockBinding.status).toBe(200);
    expect(lockBinding.json.subjects).toContainEqual({
      kind: 'User',
      apiGroup: 'rbac.authorization.platform',
      name: 'system:platform-controller-manager',
    });
    const signer = await s.request('GET', `${RBAC}/namespaces/public/roles/system:controller:bootstrap-signer`);
    expect(signer.status).toBe(200);
  });

  it('creates the system priority classes', async () => {
    const list = await s.request('GET', '/apis/scheduling.platform/v1/priorityclasses');
    expect(list.status).toBe(200);
    const byName = Object.fromEntries(
      (list.json.items as { metadata: { name: string }; value: number }[]).map((p) => [p.metadata.name, p.value]),
    );
    expect(byName).toEqual({ 'system-cluster-critical': 2000000000, 'system-node-critical': 2000001000 });
  });

  it('creates the platform Service on the first IP of the range, and Endpoints listing this server', async () => {
    const svc = await s.request('GET', '/api/v1/namespaces/default/services/platform');
    expect(svc.status).toBe(200);
    const service = svc.json as Service;
    expect(service.spec?.type).toBe('ClusterIP');
    expect(service.spec?.clusterIP).toBe('10.0.0.1');
    const port = Number(new URL(s.url).port);
    expect(service.spec?.ports).toEqual([{ name: 'https', port: 443, protocol: 'TCP', targetPort: port }]);
    expect(service.metadata?.labels).toEqual({ component: 'apiserver', provider: 'platform' });
    const ep = await eventually('the Endpoints', () => getEndpoints(s));
    expect(endpointIPs(ep)).toEqual(['127.0.0.1']);
    expect(ep.subsets?.[0]?.ports).toEqual([{ name: 'https', port, protocol: 'TCP' }]);
    // Mirrored into an EndpointSlice, as Kubernetes does for its own Service.
    await eventually('the EndpointSlice', () => sliceIPs(s));
    const slice = (await s.request('GET', '/apis/discovery.platform/v1/namespaces/default/endpointslices/platform'))
      .json;
    expect(slice.metadata.labels).toEqual({ 'kubernetes.io/service-name': 'platform' });
    expect(slice.addressType).toBe('IPv4');
    expect(slice.endpoints).toEqual([{ addresses: ['127.0.0.1'], conditions: { ready: true } }]);
    expect(slice.ports).toEqual([{ name: 'https', port, protocol: 'TCP' }]);
  });

  it('brings a deleted Service back and puts its ports right', async () => {
    const del = await s.request('DELETE', '/api/v1/namespaces/default/services/platform');
    expect(del.status).toBe(200);
    const back = await eventually('the Service to come back', async () => {
      const r = await s.request('GET', '/api/v1/namespaces/default/services/platform');
      return r.status === 200 ? (r.json as Service) : undefined;
    });
    expect(back.spec?.clusterIP).toBe('10.0.0.1');
    // A user changing the port sees it corrected at the next pass.
    back.spec!.ports![0]!.port = 8443;
    const put = await s.request('PUT', '/api/v1/namespaces/default/services/platform', { body: back });
    expect(put.status).toBe(200);
    const fixed = await eventually('the port to be corrected', async () => {
      const r = await s.request('GET', '/api/v1/namespaces/default/services/platform');
      const p = (r.json as Service).spec?.ports?.[0]?.port;
      return p === 443 ? p : undefined;
    });
    expect(fixed).toBe(443);
  });

  it('logged no errors', () => {
    expect(s.errors).toEqual([]);
  });
});

describe('RBAC reconciliation across a restart', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bootstrap-rbac-'));
  const onFile = (c: ApiServerConfig): void => {
    c.storage.servers = [`sqlite://${join(dir, 'state.db')}`];
  };
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps what users added, re-creates what they deleted, and leaves opted-out objects alone', async () => {
    const first = await startTestServer(onFile);
    const userRule = { verbs: ['get'], apiGroups: ['example.com'], resources: ['widgets'] };
    const extraSubject: Subject = { kind: 'User', apiGroup: 'rbac.authorization.platform', name: 'alice' };
    try {
      // A rule added to an aggregated role and to a plain one, a subject added to a binding.
      for (const name of ['view', 'system:basic-user']) {
        const role = (await first.request('GET', `${RBAC}/clusterroles/${name}`)).json as ClusterRole;
        role.rules = [...(role.rules ?? []), userRule];
        expect((await first.request('PUT', `${RBAC}/clusterroles/${name}`, { body: role })).status).toBe(200);
      }
      const binding = (await first.request('GET', `${RBAC}/clusterrolebindings/system:basic-user`))
        .json as ClusterRoleBinding;
      binding.subjects = [...(binding.subjects ?? []), extraSubject];
      expect(
        (await first.request('PUT', `${RBAC}/clusterrolebindings/system:basic-user`, { body: binding })).status,
      ).toBe(200);
      // A role opted out of autoupdate, with its rules cut down.
      const discovery = (await first.request('GET', `${RBAC}/clusterroles/system:discovery`)).json as ClusterRole;
      discovery.metadata!.annotations![AUTOUPDATE_ANNOTATION] = 'false';
      discovery.rules = [{ verbs: ['get'], nonResourceURLs: ['/version'] }];
      expect((await first.request('PUT', `${RBAC}/clusterroles/system:discovery`, { body: discovery })).status).toBe(
        200,
      );
      // A default role with a rule removed, and a default role deleted.
      const monitoring = (await first.request('GET', `${RBAC}/clusterroles/system:monitoring`)).json as ClusterRole;
      monitoring.rules = [{ verbs: ['get'], nonResourceURLs: ['/metrics'] }];
      expect((await first.request('PUT', `${RBAC}/clusterroles/system:monitoring`, { body: monitoring })).status).toBe(
        200,
      );
      expect((await first.request('DELETE', `${RBAC}/clusterroles/system:heapster`)).status).toBe(200);
    } finally {
      await first.server.shutdown();
    }

    const second = await startTestServer(onFile);
    try {
      const role = async (name: string): Promise<ClusterRole> =>
        (await second.request('GET', `${RBAC}/clusterroles/${name}`)).json as ClusterRole;
      const view = await role('view');
      expect(view.rules).toContainEqual(userRule);
      expect(view.rules?.some((r) => (r.resources ?? []).includes('pods'))).toBe(true);
      expect((await role('system:basic-user')).rules).toContainEqual(userRule);
      const binding = (await second.request('GET', `${RBAC}/clusterrolebindings/system:basic-user`))
        .json as ClusterRoleBinding;
      expect(binding.subjects).toContainEqual(extraSubject);
      expect(binding.subjects).toContainEqual({
        kind: 'Group',
        apiGroup: 'rbac.authorization.platform',
        name: 'system:authenticated',
      });
      expect((await role('system:discovery')).rules).toEqual([{ verbs: ['get'], nonResourceURLs: ['/version'] }]);
      const monitoring = await role('system:monitoring');
      expect(monitoring.rules?.[0]).toEqual({ verbs: ['get'], nonResourceURLs: ['/metrics'] });
      expect(monitoring.rules?.some((r) => (r.nonResourceURLs ?? []).includes('/livez'))).toBe(true);
      expect((await second.request('GET', `${RBAC}/clusterroles/system:heapster`)).status).toBe(200);
      // Another pass changes nothing.
      const again = await second.server.bootstrap.rbac!.reconcile();
      expect(again).toEqual({ created: [], updated: [], skipped: ['clusterrole/system:discovery'] });
    } finally {
      await second.stop();
    }
  });
});

describe('the platform Service', () => {
  it('is a NodePort Service with --platform-service-node-port', async () => {
    const s = await startTestServer((c) => {
      c.bootstrap = { ...FAST, platformServiceNodePort: 30443 };
    });
    try {
      const svc = (await s.request('GET', '/api/v1/namespaces/default/services/platform')).json as Service;
      expect(svc.spec?.type).toBe('NodePort');
      expect(svc.spec?.ports?.[0]).toMatchObject({ name: 'https', port: 443, nodePort: 30443 });
    } finally {
      await s.stop();
    }
  });

  it('has no Endpoints written with --endpoint-reconciler-type=none', async () => {
    const s = await startTestServer((c) => {
      c.bootstrap = { ...FAST, endpointReconcilerType: 'none' };
    });
    try {
      // Several passes of the controller run in this time; none writes the Endpoints.
      await new Promise((r) => setTimeout(r, 500));
      expect((await s.request('GET', '/api/v1/namespaces/default/services/platform')).status).toBe(200);
      expect(await getEndpoints(s)).toBeUndefined();
    } finally {
      await s.stop();
    }
  });

  it('lists this server with --endpoint-reconciler-type=master-count, trimmed to --apiserver-count', async () => {
    const s = await startTestServer((c) => {
      c.bootstrap = { ...FAST, endpointReconcilerType: 'master-count', apiServerCount: 2 };
      c.advertiseAddress = '192.0.2.5';
    });
    try {
      const ep = await eventually('the Endpoints', () => getEndpoints(s));
      expect(endpointIPs(ep)).toEqual(['192.0.2.5']);
      // Two other servers were listed (say, by servers now gone): this one adds itself and drops one after it.
      ep.subsets = [{ addresses: [{ ip: '192.0.2.1' }, { ip: '192.0.2.9' }], ports: ep.subsets![0]!.ports }];
      expect((await s.request('PUT', '/api/v1/namespaces/default/endpoints/platform', { body: ep })).status).toBe(200);
      const fixed = await eventually('the Endpoints to be reconciled', async () => {
        const ips = endpointIPs(await getEndpoints(s));
        return ips.includes('192.0.2.5') ? ips : undefined;
      });
      expect(fixed).toEqual(['192.0.2.1', '192.0.2.5']);
    } finally {
      await s.stop();
    }
  });
});

describe('two API servers on one etcd with the lease reconciler', () => {
  it('lists both, and the one shutting down removes itself', async () => {
    const etcd = await startEtcd();
    const servers: TestServer[] = [];
    try {
      for (const ip of ['192.0.2.10', '192.0.2.11']) {
        servers.push(
          await startTestServer({
            store: 'etcd',
            etcd,
            configure: (c) => {
              c.storage.prefix = '/registry-shared';
              c.advertiseAddress = ip;
              c.bootstrap = { ...FAST, masterLeaseTtlSeconds: 30 };
            },
          }),
        );
      }
      const [a, b] = servers as [TestServer, TestServer];
      const both = await eventually('both servers in the Endpoints', async () => {
        const ips = endpointIPs(await getEndpoints(b));
        return ips.length === 2 ? ips : undefined;
      });
      expect(both).toEqual(['192.0.2.10', '192.0.2.11']);
      const slice = await eventually('both servers in the EndpointSlice', async () => {
        const ips = await sliceIPs(b);
        return ips?.length === 2 ? ips : undefined;
      });
      expect(slice).toEqual(['192.0.2.10', '192.0.2.11']);
      await a.stop();
      servers.shift();
      // The shutdown itself took the server out (its lease would only expire in 30 s).
      expect(endpointIPs(await getEndpoints(b))).toEqual(['192.0.2.11']);
      expect(await sliceIPs(b)).toEqual(['192.0.2.11']);
      expect([a.errors, b.errors]).toEqual([[], []]);
    } finally {
      for (const s of servers) await s.stop();
      await etcd.stop();
    }
  });
});

describe('--runtime-config', () => {
  it('leaves out the hooks of groups that are not served', async () => {
    const s = await startTestServer((c) => {
      // Every version of the two groups (their v1beta1 is served too).
      c.runtimeConfig = new Map([
        ['rbac.authorization.platform/v1', 'false'],
        ['rbac.authorization.platform/v1beta1', 'false'],
        ['scheduling.platform/v1', 'false'],
        ['scheduling.platform/v1beta1', 'false'],
      ]);
      c.bootstrap = FAST;
    });
    try {
      const readyz = await s.request('GET', '/readyz?verbose');
      expect(readyz.status).toBe(200);
      expect(readyz.text).toContain('[+]poststarthook/bootstrap-controller ok');
      expect(readyz.text).not.toContain('rbac/bootstrap-roles');
      expect(readyz.text).not.toContain('bootstrap-system-priority-classes');
      expect(s.errors).toEqual([]);
    } finally {
      await s.stop();
    }
  });
});

describe('a server that stops renewing its lease', () => {
  it('drops out of the Endpoints when the lease expires', async () => {
    const etcd = await startEtcd();
    const prefix = '/registry-crash';
    const s = await startTestServer({
      store: 'etcd',
      etcd,
      configure: (c) => {
        c.storage.prefix = prefix;
        c.advertiseAddress = '192.0.2.20';
        c.bootstrap = FAST;
      },
    });
    // Another "server" wrote its lease and then went away without a word (a crash): nobody renews it.
    const factory = new StoreFactory({ ...DEFAULT_STORAGE_CONFIG, storeServers: etcd.endpoints, storePrefix: prefix });
    try {
      const store = await factory.storeFor({ group: '', resource: 'endpoints' });
      await store.create(`${prefix}/masterleases/192.0.2.21`, new TextEncoder().encode('{}'), { ttlSeconds: 2 });
      const listed = await eventually('the crashed server in the Endpoints', async () => {
        const ips = endpointIPs(await getEndpoints(s));
        return ips.length === 2 ? ips : undefined;
      });
      expect(listed).toEqual(['192.0.2.20', '192.0.2.21']);
      const after = await eventually('the crashed server to drop out', async () => {
        const ips = endpointIPs(await getEndpoints(s));
        return ips.length === 1 ? ips : undefined;
      });
      expect(after).toEqual(['192.0.2.20']);
      expect(s.errors).toEqual([]);
    } finally {
      await factory.close();
      await s.stop();
      await etcd.stop();
    }
  });
});

describe('shutdown delay', () => {
  it('fails /readyz at once while /livez, /healthz and requests still succeed', async () => {
    const s = await startTestServer((c) => {
      c.shutdownDelayMs = 3000;
      c.bootstrap = FAST;
    });
    const stopped = s.server.shutdown();
    try {
      const readyz = await s.request('GET', '/readyz?verbose');
      expect(readyz.status).toBe(500);
      expect(readyz.text).toContain('[-]shutdown failed: reason withheld');
      expect(readyz.text).toContain('[+]ping ok');
      expect((await s.request('GET', '/livez')).status).toBe(200);
      expect((await s.request('GET', '/healthz')).status).toBe(200);
      const list = await s.request('GET', '/api/v1/namespaces');
      expect(list.status).toBe(200);
      expect((list.json.items as unknown[]).length).toBeGreaterThan(0);
    } finally {
      await stopped;
      await s.stop();
    }
  });
});

/** GET over HTTPS, trusting `ca`. */
function get(url: string, ca: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { ca }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('--livez-grace-period', () => {
  it('counts an unfinished post-start hook as live until the period ends, never as ready', async () => {
    // The configuration of a test server (certificate included), reused for a server with one more hook.
    let config!: ApiServerConfig;
    const template = await startTestServer((c) => {
      config = c;
    });
    const ca = template.ca;
    await template.stop();
    const dir = mkdtempSync(join(tmpdir(), 'bootstrap-grace-'));
    const server = await ApiServer.create({
      ...config,
      storage: { ...config.storage, servers: [`sqlite://${join(dir, 'state.db')}`] },
      livezGracePeriodMs: 2000,
      bootstrap: FAST,
    });
    let release!: () => void;
    server.secure.addPostStartHook('test/blocked', () => new Promise<void>((r) => (release = r)));
    try {
      const { port } = await server.start();
      const url = `https://127.0.0.1:${port}`;
      // In the grace period: live (the blocked hook counts as passing), not ready.
      const live = await get(`${url}/livez?verbose`, ca);
      expect(live.status).toBe(200);
      expect(live.text).toContain('[+]poststarthook/test/blocked ok');
      const ready = await get(`${url}/readyz?verbose`, ca);
      expect(ready.status).toBe(500);
      expect(ready.text).toContain('[-]poststarthook/test/blocked failed: reason withheld');
      // After it: the unfinished hook fails /livez too.
      const dead = await eventually('/livez to fail', async () => {
        const r = await get(`${url}/livez?verbose`, ca);
        return r.status === 500 ? r : undefined;
      });
      expect(dead.text).toContain('[-]poststarthook/test/blocked failed: reason withheld');
      expect(dead.text).toContain('[+]poststarthook/bootstrap-controller ok');
      // Once the hook finishes, both pass.
      release();
      const ok = await eventually('/readyz to pass', async () => {
        const r = await get(`${url}/readyz`, ca);
        return r.status === 200 ? r : undefined;
      });
      expect(ok.text).toBe('ok');
      expect((await get(`${url}/livez`, ca)).status).toBe(200);
    } finally {
      release?.();
      await server.shutdown();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
