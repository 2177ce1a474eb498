/**
 * A standard client against the whole local cluster: `platform up` (what `npm start` runs) started as a process in
 * a temporary directory, driven by Debian's kubectl 1.20 through the client configuration it writes.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { freePort } from '@platform/apiserver';

import { ensureKubectl, kubectl, type KubectlResult } from './support/kubectl';
import { type Daemon, get, startDaemon, waitFor } from './support/process';

let dir: string;
let kubeconfig: string;
let cluster: Daemon;
let apiURL: string;

beforeAll(async () => {
  ensureKubectl();
  dir = mkdtempSync(join(tmpdir(), 'kubectl-e2e-'));
  const port = await freePort();
  apiURL = `https://127.0.0.1:${port}`;
  cluster = startDaemon('cluster', 'platform', ['up', `--dir=${join(dir, '.platform')}`, `--port=${port}`]);
  kubeconfig = join(dir, '.platform', 'admin.conf');
  await waitFor(
    'platform up to print that the cluster is running',
    async () => cluster.output().includes('platform is running.'),
    60_000,
  ).catch((err: Error) => {
    throw new Error(`${err.message}\n${cluster.output()}`);
  });
  expect(
    (
      await get(
        `https://127.0.0.1:${port}/readyz`,
        readFileSync(join(dir, '.platform', 'pki', 'apiserver.crt'), 'utf8'),
      )
    ).status,
  ).toBe(200);
}, 120_000);

afterAll(async () => {
  expect(await cluster.stop('SIGINT')).toBe(0);
  rmSync(dir, { recursive: true, force: true });
});

function ok(r: KubectlResult): string {
  if (r.status !== 0) throw new Error(`kubectl failed (${String(r.status)}): ${r.stderr}`);
  return r.stdout;
}

const k = (args: string[], input?: string): KubectlResult => kubectl(kubeconfig, args, input);

const deployment = (replicas: number): string => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: ${replicas}
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.21
        ports:
        - containerPort: 80
`;

it('lists the bootstrap namespaces', () => {
  const out = ok(k(['get', 'namespaces', '-o', 'name']));
  expect(out.split('\n').filter(Boolean).sort()).toEqual([
    'namespace/default',
    'namespace/node-lease',
    'namespace/public',
    'namespace/system',
  ]);
});

it('discovers the API, including the renamed groups', () => {
  const out = ok(k(['api-resources', '-o', 'name']));
  for (const r of [
    'configmaps',
    'pods',
    'deployments.apps',
    'jobs.batch',
    'clusterroles.rbac.authorization.platform',
    'leases.coordination.platform',
  ]) {
    expect(out).toContain(r);
  }
  expect(ok(k(['api-versions']))).toContain('rbac.authorization.platform/v1');
});

it('applies, re-applies, patches, labels and deletes a deployment', () => {
  expect(ok(k(['apply', '-f', '-'], deployment(2)))).toContain('deployment.apps/web created');
  expect(ok(k(['apply', '-f', '-'], deployment(2)))).toContain('deployment.apps/web unchanged');
  expect(ok(k(['apply', '-f', '-'], deployment(3)))).toContain('deployment.apps/web configured');
  expect(ok(k(['get', 'deployment', 'web', '-o', 'jsonpath={.spec.replicas}']))).toBe('3');
  ok(k(['patch', 'deployment', 'web', '--type=merge', '-p', '{"spec":{"replicas":4}}']));
  ok(k(['label', 'deployment', 'web', 'tier=frontend']));
  const obj = JSON.parse(ok(k(['get', 'deployment', 'web', '-o', 'json']))) as {
    spec: { replicas: number };
    metadata: { labels: Record<string, string> };
  };
  expect([obj.spec.replicas, obj.metadata.labels.tier]).toEqual([4, 'frontend']);
  expect(ok(k(['delete', 'deployment', 'web']))).toContain('deleted');
  expect(k(['get', 'deployment', 'web']).stderr).toContain('NotFound');
});

it('applies server-side, reports conflicts with other managers, and takes fields over with --force-conflicts', () => {
  const cm = (a: string): string =>
    `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ssa}\ndata: {a: "${a}", b: "x"}\n`;
  expect(ok(k(['apply', '--server-side', '-f', '-'], cm('1')))).toContain('configmap/ssa serverside-applied');
  ok(k(['patch', 'configmap', 'ssa', '--type=merge', '-p', '{"data":{"a":"2"}}']));
  const conflict = k(['apply', '--server-side', '-f', '-'], cm('3'));
  expect(conflict.status).not.toBe(0);
  expect(conflict.stderr).toMatch(/Apply failed with 1 conflict: conflict with "kubectl[a-z-]*" using v1: \.data\.a/);
  expect(ok(k(['apply', '--server-side', '--force-conflicts', '-f', '-'], cm('3')))).toContain(
    'configmap/ssa serverside-applied',
  );
  const obj = JSON.parse(ok(k(['get', 'configmap', 'ssa', '-o', 'json']))) as {
    data: Record<string, string>;
    metadata: { managedFields: { manager: string; operation: string }[] };
  };
  expect(obj.data).toEqual({ a: '3', b: 'x' });
  expect(obj.metadata.managedFields.map((e) => [e.manager, e.operation])).toEqual([['kubectl', 'Apply']]);
  ok(k(['delete', 'configmap', 'ssa']));
  // An object made by client-side apply moves to server-side apply without conflicts on what it last applied.
  expect(ok(k(['apply', '-f', '-'], cm('1')))).toContain('configmap/ssa created');
  expect(ok(k(['apply', '--server-side', '-f', '-'], cm('2')))).toContain('configmap/ssa serverside-applied');
  expect(ok(k(['get', 'configmap', 'ssa', '-o', 'jsonpath={.data.a}']))).toBe('2');
  ok(k(['delete', 'configmap', 'ssa']));
});

it('validates manifests against the served OpenAPI document', () => {
  const r = k(['create', '-f', '-'], 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad}\nbogusField: true\n');
  expect(r.status).not.toBe(0);
  expect(r.stderr).toContain('unknown field "bogusField"');
  expect(ok(k(['explain', 'deployment.spec.replicas']))).toContain('KIND:     Deployment');
});

it('creates from literals, edits with a generator, and reports server errors as Kubernetes does', () => {
  expect(ok(k(['create', 'configmap', 'settings', '--from-literal=a=1']))).toContain('configmap/settings created');
  expect(k(['create', 'configmap', 'settings', '--from-literal=a=1']).stderr).toContain('AlreadyExists');
  expect(k(['create', 'configmap', 'Bad_Name']).stderr).toContain('is invalid');
  expect(ok(k(['get', 'cm', 'settings', '-o', 'jsonpath={.data.a}']))).toBe('1');
});

it('creates pods: every namespace gets its default ServiceAccount, again after it is deleted', async () => {
  ok(k(['create', 'namespace', 'team']));
  const hasDefault = async (): Promise<boolean> =>
    k(['get', 'serviceaccount', 'default', '-n', 'team', '-o', 'name']).stdout.trim() === 'serviceaccount/default';
  await waitFor('the default ServiceAccount of team', hasDefault, 15_000);
  const pod = 'apiVersion: v1\nkind: Pod\nmetadata: {name: p1}\nspec:\n  containers:\n  - {name: c, image: nginx}\n';
  expect(ok(k(['create', '-n', 'team', '-f', '-'], pod))).toContain('pod/p1 created');
  expect(ok(k(['get', 'pod', 'p1', '-n', 'team', '-o', 'jsonpath={.spec.serviceAccountName}']))).toBe('default');
  const uid = ok(k(['get', 'serviceaccount', 'default', '-n', 'team', '-o', 'jsonpath={.metadata.uid}']));
  ok(k(['delete', 'serviceaccount', 'default', '-n', 'team']));
  await waitFor(
    'the default ServiceAccount of team to be created again',
    async () => {
      const r = k(['get', 'serviceaccount', 'default', '-n', 'team', '-o', 'jsonpath={.metadata.uid}']);
      return r.status === 0 && r.stdout !== '' && r.stdout !== uid;
    },
    15_000,
  );
  ok(k(['delete', 'pod', 'p1', '-n', 'team', '--grace-period=0', '--force']));
});

it('aggregates a labelled ClusterRole into view, and through it edit and admin, until it is deleted', async () => {
  const widgets = { apiGroups: ['widgets.e2e.platform'], resources: ['widgets'], verbs: ['get', 'list'] };
  const hasWidgets = (role: string): boolean => {
    const rules = (JSON.parse(ok(k(['get', 'clusterrole', role, '-o', 'json']))) as { rules?: unknown[] }).rules;
    return (rules ?? []).some((r) => JSON.stringify(r) === JSON.stringify(widgets));
  };
  expect(['view', 'edit', 'admin'].filter(hasWidgets)).toEqual([]);
  ok(
    k(
      ['create', '-f', '-'],
      JSON.stringify({
        apiVersion: 'rbac.authorization.platform/v1',
        kind: 'ClusterRole',
        metadata: {
          name: 'e2e-aggregated-widgets',
          labels: { 'rbac.authorization.platform/aggregate-to-view': 'true' },
        },
        rules: [widgets],
      }),
    ),
  );
  for (const role of ['view', 'edit', 'admin'])
    await waitFor(`the ${role} ClusterRole to get the widgets rule`, async () => hasWidgets(role), 5_000);
  ok(k(['delete', 'clusterrole', 'e2e-aggregated-widgets']));
  for (const role of ['view', 'edit', 'admin'])
    await waitFor(`the ${role} ClusterRole to lose the widgets rule`, async () => !hasWidgets(role), 5_000);
});

it('watches with get -w', () => {
  const r = k(['get', 'configmaps', '-w', '--request-timeout=3s', '-o', 'name']);
  expect(r.stdout).toContain('configmap/settings');
});

it('describes and edits objects', () => {
  ok(k(['create', 'configmap', 'editable', '--from-literal=a=1']));
  const described = ok(k(['describe', 'configmap', 'editable']));
  expect(described).toMatch(/^Name:\s+editable$/m);
  expect(described).toMatch(/^Namespace:\s+default$/m);
  // kubectl edit runs $KUBE_EDITOR on a temporary file; this editor changes the value in place.
  const editor = join(dir, 'editor.sh');
  writeFileSync(editor, `#!/bin/sh\nsed -i 's/^  a: "1"$/  a: "9"/' "$1"\n`, { mode: 0o755 });
  expect(ok(kubectl(kubeconfig, ['edit', 'configmap', 'editable'], undefined, { KUBE_EDITOR: editor }))).toContain(
    'configmap/editable edited',
  );
  expect(ok(k(['get', 'configmap', 'editable', '-o', 'jsonpath={.data.a}']))).toBe('9');
  ok(k(['delete', 'configmap', 'editable']));
});

it('lets anonymous requests reach health checks, the version and discovery only (RBAC and Node authorization)', async () => {
  const ca = readFileSync(join(dir, '.platform', 'pki', 'apiserver.crt'), 'utf8');
  for (const path of ['/livez', '/readyz', '/healthz', '/version', '/api', '/apis', '/api/v1', '/apis/apps/v1'])
    expect([path, (await get(`${apiURL}${path}`, ca)).status]).toEqual([path, 200]);
  for (const path of ['/api/v1/namespaces/default/configmaps', '/metrics', '/apis/apps/v1/deployments'])
    expect([path, (await get(`${apiURL}${path}`, ca)).status]).toEqual([path, 403]);
  const list = await get(`${apiURL}/api/v1/namespaces`, ca);
  expect(list.status).toBe(403);
  expect(JSON.parse(list.text)).toMatchObject({
    kind: 'Status',
    reason: 'Forbidden',
    message:
      'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope',
  });
  // The admin token is in system:masters, bound to cluster-admin. (`kubectl auth can-i` names the group
  // authorization.k8s.io in its code, so the review is created through discovery instead.)
  const review = ok(
    k(
      ['create', '-o', 'json', '-f', '-'],
      'apiVersion: authorization.platform/v1\nkind: SelfSubjectAccessReview\nspec: {resourceAttributes: {verb: "*", resource: "*", group: "*"}}\n',
    ),
  );
  expect(JSON.parse(review).status).toMatchObject({ allowed: true });
});

it('runs server-side dry runs: nothing is stored', () => {
  expect(ok(k(['apply', '--dry-run=server', '-f', '-'], deployment(1)))).toContain(
    'deployment.apps/web created (server dry run)',
  );
  expect(k(['get', 'deployment', 'web']).stderr).toContain('NotFound');
  ok(k(['create', 'configmap', 'dry', '--from-literal=a=1']));
  expect(ok(k(['delete', 'configmap', 'dry', '--dry-run=server']))).toContain(
    'configmap "dry" deleted (server dry run)',
  );
  expect(ok(k(['get', 'configmap', 'dry', '-o', 'name']))).toBe('configmap/dry\n');
  ok(k(['delete', 'configmap', 'dry']));
});
