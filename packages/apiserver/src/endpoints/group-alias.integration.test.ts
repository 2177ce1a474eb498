/**
 * The `.k8s.io` group aliases under RBAC, over HTTPS: what `kubectl auth can-i` sends (a SelfSubjectAccessReview on
 * `authorization.k8s.io`) answers no, then yes once a binding made on `rbac.authorization.k8s.io` grants the right;
 * a rule on the `.platform` group covers a request that spelled the `.k8s.io` one.
 */
import { buildAuthorizer } from '../cmd/authorization-options';
import { type Authenticator, requestAuthenticator } from '../auth/authenticator';
import { type Authorizer, unionAuthorizer } from '../auth/authorizer';
import { startTestServer, type TestResponse, type TestServer } from '../testing/test-server';

/** `Bearer <user>|<group>,...` (tests only). */
const bearerUsers: Authenticator = {
  async authenticate(req) {
    const h = req.headers.authorization;
    if (!h?.startsWith('Bearer ')) return undefined;
    const [name = '', groups = ''] = h.slice('Bearer '.length).split('|');
    return { user: { name, groups: groups ? groups.split(',') : [] } };
  },
};

const health: Authorizer = {
  authorize: async (a) =>
    !a.resourceRequest && ['/readyz', '/livez', '/healthz'].includes(a.path)
      ? { decision: 'allow', reason: '' }
      : { decision: 'noOpinion', reason: '' },
};

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer((c) => {
    c.security = {
      authenticator: requestAuthenticator([bearerUsers], true),
      authorizer: unionAuthorizer([
        health,
        buildAuthorizer({
          modes: ['RBAC'],
          policyFile: '',
          webhookConfigFile: '',
          webhookVersion: 'v1beta1',
          webhookCacheAuthorizedTtlMs: 300_000,
          webhookCacheUnauthorizedTtlMs: 30_000,
        }),
      ]),
    };
  });
}, 90_000);

afterAll(async () => {
  await server?.stop();
});

function as(token: string) {
  return (method: string, path: string, body?: unknown): Promise<TestResponse> =>
    server.request(method, path, { headers: { authorization: `Bearer ${token}` }, ...(body ? { body } : {}) });
}

async function eventually(check: () => Promise<void>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

const canICreatePods = {
  apiVersion: 'authorization.k8s.io/v1',
  kind: 'SelfSubjectAccessReview',
  spec: { resourceAttributes: { namespace: 'default', verb: 'create', resource: 'pods' } },
};

it('answers can-i no, then yes once a binding spelled the Kubernetes way grants it', async () => {
  const admin = as('root|system:masters');
  const alice = as('alice');
  const ssar = '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews';
  const no = await alice('POST', ssar, canICreatePods);
  expect([no.status, no.json.apiVersion, no.json.status.allowed]).toEqual([201, 'authorization.k8s.io/v1', false]);
  // A rule on the .platform group covers the .k8s.io spelling of a path.
  const listRoles = await alice('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles');
  expect([listRoles.status, listRoles.json.reason]).toEqual([403, 'Forbidden']);

  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  const role = await admin('POST', `${rbac}/clusterroles`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'pod-maker' },
    rules: [
      { apiGroups: [''], resources: ['pods'], verbs: ['create'] },
      { apiGroups: ['rbac.authorization.platform'], resources: ['clusterroles'], verbs: ['list'] },
    ],
  });
  expect([role.status, role.json.apiVersion]).toEqual([201, 'rbac.authorization.k8s.io/v1']);
  const binding = await admin('POST', `${rbac}/namespaces/default/rolebindings`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'alice-pods' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'pod-maker' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }],
  });
  expect(binding.status).toBe(201);
  await eventually(async () => {
    const yes = await alice('POST', ssar, canICreatePods);
    expect([yes.status, yes.json.status.allowed]).toEqual([201, true]);
  });
  // The binding is namespaced: the cluster-wide list stays forbidden; a ClusterRoleBinding grants it.
  const crb = await admin('POST', `${rbac}/clusterrolebindings`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'alice-roles' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'pod-maker' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }],
  });
  expect(crb.status).toBe(201);
  await eventually(async () => {
    const list = await alice('GET', `${rbac}/clusterroles`);
    expect([list.status, list.json.apiVersion]).toEqual([200, 'rbac.authorization.k8s.io/v1']);
  });
});

it('answers a watch on a .k8s.io path with its objects in that spelling, in JSON and in Protobuf', async () => {
  const admin = as('admin|system:masters');
  const path = '/apis/rbac.authorization.k8s.io/v1/clusterroles?watch=1&timeoutSeconds=4';
  const watch = (name: string, accept: string): Promise<TestResponse> =>
    server.request('GET', `${path}&fieldSelector=metadata.name%3D${name}`, {
      headers: { authorization: 'Bearer admin|system:masters', accept },
    });
  const json = watch('alias-watch-json', 'application/json');
  // What client-go sends for a watch in Protobuf.
  const protobuf = watch('alias-watch-pb', 'application/vnd.kubernetes.protobuf, */*');
  for (const name of ['alias-watch-json', 'alias-watch-pb'])
    expect(
      (await admin('POST', '/apis/rbac.authorization.platform/v1/clusterroles', { metadata: { name } })).status,
    ).toBe(201);
  // Whether the watch began before the create or after it, the role comes as one ADDED event.
  const events = (await json).text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { type: string; object: { apiVersion: string; metadata: { name: string } } });
  expect(events.map((e) => [e.type, e.object.apiVersion, e.object.metadata.name])).toEqual([
    ['ADDED', 'rbac.authorization.k8s.io/v1', 'alias-watch-json'],
  ]);
  const pb = await protobuf;
  expect(pb.headers['content-type']).toMatch(/^application\/vnd\.kubernetes\.protobuf;stream=watch/);
  const bytes = pb.body.toString('latin1');
  expect(bytes).toContain('rbac.authorization.k8s.io/v1');
  expect(bytes).not.toContain('rbac.authorization.platform');
  expect(bytes).toContain('alias-watch-pb');
});
