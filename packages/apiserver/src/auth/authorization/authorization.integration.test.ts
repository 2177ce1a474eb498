/**
 * Authorization end to end: real API servers over HTTPS with the chains `--authorization-mode` builds, a test
 * authenticator that takes the user from `Authorization: Bearer <user>[|<group>,<group>...]`, and a webhook served
 * over HTTPS on 127.0.0.1. Changes to roles and bindings take effect without a restart (the RBAC index follows their
 * watches), so the tests wait for them with `eventually`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { ensureSelfSignedCertKey } from '@platform/common';

import { buildAuthorizer, type AuthorizationSettings } from '../../cmd/authorization-options';
import { startTestServer, type TestResponse, type TestServer } from '../../testing/test-server';
import { type Authenticator, requestAuthenticator } from '../authenticator';
import { type Authorizer, unionAuthorizer } from '../authorizer';

/** `Bearer <user>|<group>,...`: the user and groups of a request (tests only). */
const bearerUsers: Authenticator = {
  async authenticate(req) {
    const h = req.headers.authorization;
    if (!h?.startsWith('Bearer ')) return undefined;
    const [name = '', groups = ''] = h.slice('Bearer '.length).split('|');
    return { user: { name, groups: groups ? groups.split(',') : [] } };
  },
};

/** The health endpoints for everyone (the test server polls `/readyz` anonymously). */
const health: Authorizer = {
  authorize: async (a) =>
    !a.resourceRequest && ['/readyz', '/livez', '/healthz'].includes(a.path)
      ? { decision: 'allow', reason: '' }
      : { decision: 'noOpinion', reason: '' },
};

function settings(o: Partial<AuthorizationSettings>): AuthorizationSettings {
  return {
    modes: ['AlwaysAllow'],
    policyFile: '',
    webhookConfigFile: '',
    webhookVersion: 'v1beta1',
    webhookCacheAuthorizedTtlMs: 300_000,
    webhookCacheUnauthorizedTtlMs: 30_000,
    ...o,
  };
}

async function serve(s: AuthorizationSettings): Promise<TestServer> {
  return startTestServer((c) => {
    c.security = {
      authenticator: requestAuthenticator([bearerUsers], true),
      authorizer: unionAuthorizer([health, buildAuthorizer(s)]),
    };
  });
}

type As = (method: string, path: string, body?: unknown) => Promise<TestResponse>;

function as(server: TestServer, user: string, groups: string[] = []): As {
  const token = groups.length ? `${user}|${groups.join(',')}` : user;
  return (method, path, body) =>
    server.request(method, path, {
      headers: { authorization: `Bearer ${token}` },
      ...(body === undefined ? {} : { body }),
    });
}

/** Retries `check` until it passes (changes reach the RBAC index through a watch). */
async function eventually(check: () => Promise<void>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

const RBAC = '/apis/rbac.authorization.platform/v1';
const rbacGroup = 'rbac.authorization.platform';

function role(name: string, rules: object[], kind = 'Role'): object {
  return { apiVersion: `${rbacGroup}/v1`, kind, metadata: { name }, rules };
}

function binding(name: string, roleRef: [string, string], subjects: object[], kind = 'RoleBinding'): object {
  return {
    apiVersion: `${rbacGroup}/v1`,
    kind,
    metadata: { name },
    roleRef: { apiGroup: rbacGroup, kind: roleRef[0], name: roleRef[1] },
    subjects,
  };
}

const user = (name: string): object => ({ kind: 'User', apiGroup: rbacGroup, name });
const group = (name: string): object => ({ kind: 'Group', apiGroup: rbacGroup, name });

function pod(name: string, nodeName: string, spec: object = {}): object {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { nodeName, containers: [{ name: 'c', image: 'busybox:1' }], ...spec },
  };
}

describe('RBAC and Node authorization', () => {
  let server: TestServer;
  let admin: As;

  beforeAll(async () => {
    server = await serve(settings({ modes: ['Node', 'RBAC'] }));
    admin = as(server, 'root', ['system:masters']);
    for (const ns of ['team', 'esc', 'other'])
      expect(
        (await admin('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }))
          .status,
      ).toBe(201);
  }, 30_000);

  afterAll(async () => {
    await server?.stop();
  });

  it('refuses with the 403 Status Kubernetes writes, naming user, verb, resource and namespace', async () => {
    const r = await as(server, 'alice')('GET', '/api/v1/namespaces/team/pods');
    expect(r.status).toBe(403);
    expect(r.json).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'Forbidden',
      code: 403,
      details: { kind: 'pods' },
      message: 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "team"',
    });
    const named = await as(server, 'alice')('GET', '/apis/apps/v1/deployments');
    expect(named.json.message).toBe(
      'deployments.apps is forbidden: User "alice" cannot list resource "deployments" in API group "apps" at the cluster scope',
    );
    const path = await as(server, 'alice')('GET', '/custom/thing');
    expect([path.status, path.json.message]).toEqual([403, 'forbidden: User "alice" cannot get path "/custom/thing"']);
    const sub = await as(server, 'alice')('GET', '/api/v1/namespaces/team/pods/p/log');
    expect(sub.json.message).toBe(
      'pods "p" is forbidden: User "alice" cannot get resource "pods/log" in API group "" in the namespace "team"',
    );
  });

  it('allows system:masters everything', async () => {
    expect((await admin('GET', '/api/v1/namespaces/team/pods')).status).toBe(200);
  });

  it('applies a RoleBinding in its namespace only, and a removed binding stops applying, without a restart', async () => {
    const alice = as(server, 'alice');
    expect(
      (
        await admin(
          'POST',
          `${RBAC}/namespaces/team/roles`,
          role('pod-reader', [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }]),
        )
      ).status,
    ).toBe(201);
    expect(
      (
        await admin(
          'POST',
          `${RBAC}/namespaces/team/rolebindings`,
          binding('alice-reads', ['Role', 'pod-reader'], [user('alice')]),
        )
      ).status,
    ).toBe(201);
    await eventually(async () => expect((await alice('GET', '/api/v1/namespaces/team/pods')).status).toBe(200));
    expect((await alice('GET', '/api/v1/namespaces/other/pods')).status).toBe(403);
    expect((await alice('GET', '/api/v1/pods')).status).toBe(403);
    expect((await alice('DELETE', '/api/v1/namespaces/team/pods/x')).status).toBe(403);
    expect((await admin('DELETE', `${RBAC}/namespaces/team/rolebindings/alice-reads`)).status).toBe(200);
    await eventually(async () => expect((await alice('GET', '/api/v1/namespaces/team/pods')).status).toBe(403));
  });

  it('matches * in verbs, groups and resources, through groups', async () => {
    await admin(
      'POST',
      `${RBAC}/clusterroles`,
      role('read-all', [{ apiGroups: ['*'], resources: ['*'], verbs: ['get', 'list'] }], 'ClusterRole'),
    );
    await admin(
      'POST',
      `${RBAC}/clusterrolebindings`,
      binding('readers-read-all', ['ClusterRole', 'read-all'], [group('readers')], 'ClusterRoleBinding'),
    );
    await admin(
      'POST',
      `${RBAC}/clusterroles`,
      role('cm-all', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['*'] }], 'ClusterRole'),
    );
    await admin(
      'POST',
      `${RBAC}/namespaces/other/rolebindings`,
      binding('bob-cm', ['ClusterRole', 'cm-all'], [user('bob')]),
    );
    const bob = as(server, 'bob', ['readers']);
    await eventually(async () =>
      expect((await bob('GET', '/apis/apps/v1/namespaces/other/deployments')).status).toBe(200),
    );
    expect((await bob('GET', '/api/v1/nodes')).status).toBe(200);
    expect((await bob('POST', '/api/v1/namespaces/other/secrets', { metadata: { name: 's' } })).status).toBe(403);
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'made-by-bob' } };
    await eventually(async () =>
      expect((await bob('POST', '/api/v1/namespaces/other/configmaps', cm)).status).toBe(201),
    );
    expect((await bob('DELETE', '/api/v1/namespaces/other/configmaps/made-by-bob')).status).toBe(200);
    // Through a RoleBinding, the ClusterRole applies in that namespace only.
    expect((await bob('POST', '/api/v1/namespaces/team/configmaps', cm)).status).toBe(403);
  });

  it('limits a rule to its resourceNames', async () => {
    await admin('POST', '/api/v1/namespaces/team/configmaps', { metadata: { name: 'open' }, data: { a: '1' } });
    await admin('POST', '/api/v1/namespaces/team/configmaps', { metadata: { name: 'closed' } });
    await admin(
      'POST',
      `${RBAC}/namespaces/team/roles`,
      role('one-cm', [{ apiGroups: [''], resources: ['configmaps'], resourceNames: ['open'], verbs: ['get', 'list'] }]),
    );
    await admin(
      'POST',
      `${RBAC}/namespaces/team/rolebindings`,
      binding('carl-one-cm', ['Role', 'one-cm'], [user('carl')]),
    );
    const carl = as(server, 'carl');
    await eventually(async () =>
      expect((await carl('GET', '/api/v1/namespaces/team/configmaps/open')).status).toBe(200),
    );
    expect((await carl('GET', '/api/v1/namespaces/team/configmaps/closed')).status).toBe(403);
    expect((await carl('GET', '/api/v1/namespaces/team/configmaps')).status).toBe(403);
  });

  it('grants non-resource URLs through ClusterRoleBindings only, * as a prefix', async () => {
    await admin(
      'POST',
      `${RBAC}/clusterroles`,
      role('custom-urls', [{ nonResourceURLs: ['/custom/*', '/exact'], verbs: ['get'] }], 'ClusterRole'),
    );
    await admin(
      'POST',
      `${RBAC}/namespaces/team/rolebindings`,
      binding('dan-urls-ns', ['ClusterRole', 'custom-urls'], [user('dan')]),
    );
    await admin(
      'POST',
      `${RBAC}/clusterrolebindings`,
      binding('erin-urls', ['ClusterRole', 'custom-urls'], [user('erin')], 'ClusterRoleBinding'),
    );
    const erin = as(server, 'erin');
    // Allowed, then not served: 404.
    await eventually(async () => expect((await erin('GET', '/custom/a/b')).status).toBe(404));
    expect((await erin('GET', '/exact')).status).toBe(404);
    expect((await erin('GET', '/exact/more')).status).toBe(403);
    expect((await erin('POST', '/custom/a')).status).toBe(403);
    expect((await as(server, 'dan')('GET', '/custom/a')).status).toBe(403);
  });

  it('matches subresources: pods/log, */scale (asked through SubjectAccessReview, from the same chain)', async () => {
    await admin(
      'POST',
      `${RBAC}/namespaces/team/roles`,
      role('logs-and-scale', [
        { apiGroups: [''], resources: ['pods/log'], verbs: ['get'] },
        { apiGroups: ['apps'], resources: ['*/scale'], verbs: ['update'] },
      ]),
    );
    await admin(
      'POST',
      `${RBAC}/namespaces/team/rolebindings`,
      binding('fay-logs', ['Role', 'logs-and-scale'], [user('fay')]),
    );
    const sar = async (attrs: object): Promise<{ allowed: boolean; reason?: string }> => {
      const r = await admin('POST', '/apis/authorization.platform/v1/subjectaccessreviews', {
        apiVersion: 'authorization.platform/v1',
        kind: 'SubjectAccessReview',
        spec: { user: 'fay', resourceAttributes: { namespace: 'team', ...attrs } },
      });
      expect(r.status).toBe(201);
      return r.json.status;
    };
    await eventually(async () =>
      expect((await sar({ verb: 'get', resource: 'pods', subresource: 'log' })).allowed).toBe(true),
    );
    expect((await sar({ verb: 'get', resource: 'pods', subresource: 'log' })).reason).toBe(
      'RBAC: allowed by RoleBinding "fay-logs/team" of Role "logs-and-scale" to User "fay"',
    );
    expect((await sar({ verb: 'get', resource: 'pods' })).allowed).toBe(false);
    expect((await sar({ verb: 'update', group: 'apps', resource: 'deployments', subresource: 'scale' })).allowed).toBe(
      true,
    );
    expect((await sar({ verb: 'update', group: 'apps', resource: 'statefulsets', subresource: 'scale' })).allowed).toBe(
      true,
    );
    expect((await sar({ verb: 'update', group: 'apps', resource: 'deployments', subresource: 'status' })).allowed).toBe(
      false,
    );
    expect((await sar({ verb: 'update', group: 'apps', resource: 'deployments' })).allowed).toBe(false);
  });

  it('binds service accounts by name and namespace, and ignores a binding to a missing role (saying so)', async () => {
    await admin(
      'POST',
      `${RBAC}/namespaces/team/rolebindings`,
      binding('robot', ['Role', 'pod-reader'], [{ kind: 'ServiceAccount', name: 'robot' }]),
    );
    const robot = as(server, 'system:serviceaccount:team:robot');
    await eventually(async () => expect((await robot('GET', '/api/v1/namespaces/team/pods')).status).toBe(200));
    expect((await as(server, 'system:serviceaccount:other:robot')('GET', '/api/v1/namespaces/team/pods')).status).toBe(
      403,
    );
    await admin(
      'POST',
      `${RBAC}/namespaces/team/rolebindings`,
      binding('ghost', ['Role', 'no-such-role'], [user('gus')]),
    );
    await eventually(async () => {
      const r = await as(server, 'gus')('GET', '/api/v1/namespaces/team/pods');
      expect(r.status).toBe(403);
      expect(r.json.message).toContain('RBAC: roles.rbac.authorization.platform "no-such-role" not found');
    });
  });

  it('answers self and local access reviews and rules reviews from the same chain', async () => {
    await admin(
      'POST',
      `${RBAC}/clusterroles`,
      role(
        'self-review',
        [
          {
            apiGroups: ['authorization.platform'],
            resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
            verbs: ['create'],
          },
        ],
        'ClusterRole',
      ),
    );
    await admin(
      'POST',
      `${RBAC}/clusterrolebindings`,
      binding('hal-review', ['ClusterRole', 'self-review'], [user('hal')], 'ClusterRoleBinding'),
    );
    await admin(
      'POST',
      `${RBAC}/namespaces/team/rolebindings`,
      binding('hal-reads', ['Role', 'pod-reader'], [user('hal')]),
    );
    const hal = as(server, 'hal');
    const ssar = (verb: string): Promise<TestResponse> =>
      hal('POST', '/apis/authorization.platform/v1/selfsubjectaccessreviews', {
        apiVersion: 'authorization.platform/v1',
        kind: 'SelfSubjectAccessReview',
        spec: { resourceAttributes: { namespace: 'team', verb, resource: 'pods' } },
      });
    await eventually(async () => expect((await ssar('list')).json?.status?.allowed).toBe(true));
    expect((await ssar('delete')).json.status.allowed).toBe(false);
    const rules = await hal('POST', '/apis/authorization.platform/v1/selfsubjectrulesreviews', {
      apiVersion: 'authorization.platform/v1',
      kind: 'SelfSubjectRulesReview',
      spec: { namespace: 'team' },
    });
    expect(rules.status).toBe(201);
    expect(rules.json.status.resourceRules).toContainEqual({
      verbs: ['get', 'list'],
      apiGroups: [''],
      resources: ['pods'],
    });
    expect(rules.json.status.incomplete).toBe(true); // the Node authorizer cannot list its rules
    const local = await admin('POST', '/apis/authorization.platform/v1/namespaces/team/localsubjectaccessreviews', {
      apiVersion: 'authorization.platform/v1',
      kind: 'LocalSubjectAccessReview',
      spec: { user: 'hal', resourceAttributes: { namespace: 'team', verb: 'get', resource: 'pods' } },
    });
    expect(local.json.status.allowed).toBe(true);
  });

  it('needs the permission of the real verb for a dry run', async () => {
    const ivy = as(server, 'ivy');
    await admin(
      'POST',
      `${RBAC}/namespaces/team/rolebindings`,
      binding('ivy-reads', ['Role', 'pod-reader'], [user('ivy')]),
    );
    await eventually(async () => expect((await ivy('GET', '/api/v1/namespaces/team/pods')).status).toBe(200));
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dry' } };
    const refused = await ivy('POST', '/api/v1/namespaces/team/configmaps?dryRun=All', cm);
    expect([refused.status, refused.json.message]).toEqual([
      403,
      'configmaps is forbidden: User "ivy" cannot create resource "configmaps" in API group "" in the namespace "team"',
    ]);
    await admin(
      'POST',
      `${RBAC}/namespaces/team/roles`,
      role('cm-creator', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['create'] }]),
    );
    await admin(
      'POST',
      `${RBAC}/namespaces/team/rolebindings`,
      binding('ivy-creates', ['Role', 'cm-creator'], [user('ivy')]),
    );
    await eventually(async () =>
      expect((await ivy('POST', '/api/v1/namespaces/team/configmaps?dryRun=All', cm)).status).toBe(201),
    );
    expect((await admin('GET', '/api/v1/namespaces/team/configmaps/dry')).status).toBe(404);
  });

  it('prevents escalation: roles and bindings grant only what the user holds, unless escalate or bind', async () => {
    await admin(
      'POST',
      `${RBAC}/namespaces/esc/roles`,
      role('rbac-editor', [
        { apiGroups: [rbacGroup], resources: ['roles', 'rolebindings'], verbs: ['create', 'update', 'get'] },
        { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
      ]),
    );
    await admin(
      'POST',
      `${RBAC}/namespaces/esc/rolebindings`,
      binding('jo-edits', ['Role', 'rbac-editor'], [user('jo')]),
    );
    await admin(
      'POST',
      `${RBAC}/clusterroles`,
      role('secret-reader', [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }], 'ClusterRole'),
    );
    const jo = as(server, 'jo');
    const small = role('small', [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }]);
    await eventually(async () => expect((await jo('POST', `${RBAC}/namespaces/esc/roles`, small)).status).toBe(201));
    const big = role('big', [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'delete'] }]);
    const refused = await jo('POST', `${RBAC}/namespaces/esc/roles`, big);
    expect(refused.status).toBe(403);
    expect(refused.json.message).toBe(
      'roles.rbac.authorization.platform "big" is forbidden: user "jo" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}',
    );
    // Changing a role's rules is checked too.
    const current = (await jo('GET', `${RBAC}/namespaces/esc/roles/small`)).json;
    const grown = { ...current, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['*'] }] };
    expect((await jo('PUT', `${RBAC}/namespaces/esc/roles/small`, grown)).status).toBe(403);
    // Binding a role whose rules jo holds: fine; one she does not: refused; a missing one: 404.
    expect(
      (await jo('POST', `${RBAC}/namespaces/esc/rolebindings`, binding('kim-small', ['Role', 'small'], [user('kim')])))
        .status,
    ).toBe(201);
    const bindSecrets = binding('kim-secrets', ['ClusterRole', 'secret-reader'], [user('kim')]);
    const r = await jo('POST', `${RBAC}/namespaces/esc/rolebindings`, bindSecrets);
    expect([r.status, r.json.message]).toEqual([
      403,
      'rolebindings.rbac.authorization.platform "kim-secrets" is forbidden: user "jo" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}',
    ]);
    expect(
      (await jo('POST', `${RBAC}/namespaces/esc/rolebindings`, binding('x', ['Role', 'nothing'], [user('kim')])))
        .status,
    ).toBe(404);
    // A malformed reference is not an escalation question: validation answers it.
    expect(
      (await jo('POST', `${RBAC}/namespaces/esc/rolebindings`, binding('bad', ['Bogus', 'x'], [user('kim')]))).status,
    ).toBe(422);
    // `bind` on that ClusterRole by name, in this namespace: now allowed; on another name it does not help.
    await admin(
      'POST',
      `${RBAC}/namespaces/esc/roles`,
      role('binder', [
        { apiGroups: [rbacGroup], resources: ['clusterroles'], verbs: ['bind'], resourceNames: ['secret-reader'] },
      ]),
    );
    await admin('POST', `${RBAC}/namespaces/esc/rolebindings`, binding('jo-binds', ['Role', 'binder'], [user('jo')]));
    await eventually(async () =>
      expect((await jo('POST', `${RBAC}/namespaces/esc/rolebindings`, bindSecrets)).status).toBe(201),
    );
    await admin(
      'POST',
      `${RBAC}/clusterroles`,
      role('node-reader', [{ apiGroups: [''], resources: ['nodes'], verbs: ['get'] }], 'ClusterRole'),
    );
    expect(
      (
        await jo(
          'POST',
          `${RBAC}/namespaces/esc/rolebindings`,
          binding('kim-nodes', ['ClusterRole', 'node-reader'], [user('kim')]),
        )
      ).status,
    ).toBe(403);
    // `escalate` on roles: any rules.
    await admin(
      'POST',
      `${RBAC}/namespaces/esc/roles`,
      role('escalator', [{ apiGroups: [rbacGroup], resources: ['roles'], verbs: ['escalate'] }]),
    );
    await admin(
      'POST',
      `${RBAC}/namespaces/esc/rolebindings`,
      binding('jo-escalates', ['Role', 'escalator'], [user('jo')]),
    );
    await eventually(async () => expect((await jo('POST', `${RBAC}/namespaces/esc/roles`, big)).status).toBe(201));
  });

  it('lets a node reach its own Node, its pods, what they reference, and its Lease; nothing of other nodes', async () => {
    for (const [kind, name] of [
      ['secrets', 's1'],
      ['secrets', 's2'],
      ['configmaps', 'c1'],
    ])
      await admin('POST', `/api/v1/namespaces/team/${kind}`, { metadata: { name } });
    for (const n of ['n1', 'n2'])
      await admin('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: n } });
    const p1 = pod('p1', 'n1', {
      volumes: [{ name: 'v', secret: { secretName: 's1' } }],
      containers: [{ name: 'c', image: 'busybox:1', envFrom: [{ configMapRef: { name: 'c1' } }] }],
    });
    expect((await admin('POST', '/api/v1/namespaces/team/pods', p1)).status).toBe(201);
    expect(
      (
        await admin(
          'POST',
          '/api/v1/namespaces/team/pods',
          pod('p2', 'n2', { volumes: [{ name: 'v', secret: { secretName: 's2' } }] }),
        )
      ).status,
    ).toBe(201);
    const n1 = as(server, 'system:node:n1', ['system:nodes']);
    await eventually(async () => expect((await n1('GET', '/api/v1/namespaces/team/secrets/s1')).status).toBe(200));
    expect((await n1('GET', '/api/v1/namespaces/team/configmaps/c1')).status).toBe(200);
    expect((await n1('GET', '/api/v1/namespaces/team/pods/p1')).status).toBe(200);
    const s2 = await n1('GET', '/api/v1/namespaces/team/secrets/s2');
    expect([s2.status, s2.json.message]).toEqual([
      403,
      'secrets "s2" is forbidden: User "system:node:n1" cannot get resource "secrets" in API group "" in the namespace "team": node authorizer: no relationship found between node "n1" and this object',
    ]);
    expect((await n1('GET', '/api/v1/namespaces/team/secrets')).status).toBe(403);
    expect((await n1('GET', '/api/v1/namespaces/team/pods/p2')).status).toBe(403);
    expect((await n1('DELETE', '/api/v1/namespaces/team/pods/p2')).status).toBe(403);
    expect((await n1('GET', '/api/v1/nodes/n1')).status).toBe(200);
    expect((await n1('GET', '/api/v1/nodes/n2')).status).toBe(403);
    expect((await n1('PATCH', '/api/v1/nodes/n2/status', {})).status).toBe(403);
    expect((await n1('GET', '/api/v1/pods')).status).toBe(200);
    expect((await n1('GET', '/api/v1/namespaces/team/services')).status).toBe(200);
    const lease = (name: string): object => ({
      apiVersion: 'coordination.platform/v1',
      kind: 'Lease',
      metadata: { name },
      spec: { holderIdentity: name },
    });
    expect((await n1('POST', '/apis/coordination.platform/v1/namespaces/node-lease/leases', lease('n1'))).status).toBe(
      201,
    );
    expect((await n1('GET', '/apis/coordination.platform/v1/namespaces/node-lease/leases/n1')).status).toBe(200);
    expect((await n1('GET', '/apis/coordination.platform/v1/namespaces/node-lease/leases/n2')).status).toBe(403);
    expect((await n1('GET', '/apis/coordination.platform/v1/namespaces/team/leases/n1')).status).toBe(403);
    // A pod that moves away (deleted) takes its references with it.
    expect((await admin('DELETE', '/api/v1/namespaces/team/pods/p1?gracePeriodSeconds=0')).status).toBe(200);
    await eventually(async () => expect((await n1('GET', '/api/v1/namespaces/team/secrets/s1')).status).toBe(403));
    // Not a node (no system:nodes group): the Node authorizer has no opinion.
    expect((await as(server, 'system:node:n2')('GET', '/api/v1/nodes/n2')).status).toBe(403);
    expect(server.errors).toEqual([]);
  });
});

describe('ABAC, AlwaysDeny and Webhook authorization', () => {
  let dir: string;
  let hook: Server;
  const calls: { user: string; body: Record<string, unknown> }[] = [];
  let servers: TestServer[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'authz-test-'));
    const pair = await ensureSelfSignedCertKey(join(dir, 'pki'), 'webhook', {
      host: '127.0.0.1',
      alternateIPs: ['127.0.0.1'],
    });
    hook = createServer({ cert: pair.certPem, key: pair.keyPem }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
        const spec = body.spec as { user: string };
        calls.push({ user: spec.user, body });
        const answer = (status: object): void => {
          res.setHeader('Content-Type', 'application/json');
          res.end(JSON.stringify({ apiVersion: body.apiVersion, kind: 'SubjectAccessReview', status }));
        };
        if (spec.user === 'slow') return; // never answers
        if (spec.user === 'garbage') return void res.end('<html>not a review</html>');
        if (spec.user === 'web-allow') return answer({ allowed: true, reason: 'the webhook says yes' });
        if (spec.user === 'web-deny') return answer({ allowed: false, denied: true, reason: 'the webhook says no' });
        answer({ allowed: false });
      });
    });
    await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
    const port = (hook.address() as { port: number }).port;
    writeFileSync(join(dir, 'ca.crt'), pair.certPem);
    writeFileSync(
      join(dir, 'webhook.yaml'),
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        '- name: authz',
        '  cluster:',
        `    server: https://127.0.0.1:${port}/authorize`,
        '    certificate-authority: ca.crt',
        'users:',
        '- name: apiserver',
        '  user:',
        '    token: secret-token',
        'contexts:',
        '- name: default',
        '  context: { cluster: authz, user: apiserver }',
        'current-context: default',
      ].join('\n'),
    );
    const policy = (spec: object): string =>
      JSON.stringify({ apiVersion: 'abac.authorization.platform/v1beta1', kind: 'Policy', spec });
    writeFileSync(
      join(dir, 'policy.jsonl'),
      [
        policy({ user: 'reader', readonly: true, namespace: '*', resource: '*', apiGroup: '*' }),
        policy({ user: 'web-deny', namespace: '*', resource: '*', apiGroup: '*' }),
      ].join('\n'),
    );
    servers = await Promise.all([
      serve(
        settings({
          modes: ['Webhook', 'ABAC'],
          policyFile: join(dir, 'policy.jsonl'),
          webhookConfigFile: join(dir, 'webhook.yaml'),
          webhookTimeoutMs: 300,
        }),
      ),
      serve(settings({ modes: ['AlwaysDeny'] })),
    ]);
  }, 30_000);

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    hook?.closeAllConnections();
    await new Promise((r) => hook?.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  it('AlwaysDeny refuses everyone but system:masters, saying "Everything is forbidden."', async () => {
    const deny = servers[1]!;
    const r = await as(deny, 'anyone')('GET', '/api/v1/namespaces');
    expect([r.status, r.json.message]).toEqual([
      403,
      'namespaces is forbidden: User "anyone" cannot list resource "namespaces" in API group "" at the cluster scope: Everything is forbidden.',
    ]);
    expect((await as(deny, 'root', ['system:masters'])('GET', '/api/v1/namespaces')).status).toBe(200);
    // Webhook (no opinion, no reason) then ABAC (no policy matched) on the other server.
    const none = await as(servers[0]!, 'anyone')('GET', '/api/v1/namespaces');
    expect(none.json.message).toBe(
      'namespaces is forbidden: User "anyone" cannot list resource "namespaces" in API group "" at the cluster scope: No policy matched.',
    );
  });

  it('ABAC: a read-only policy allows reads only; no policy, nothing', async () => {
    const reader = as(servers[0]!, 'reader');
    expect((await reader('GET', '/api/v1/namespaces/default/configmaps')).status).toBe(200);
    const r = await reader('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'x' } });
    expect(r.status).toBe(403);
    expect(r.json.message).toContain('No policy matched.');
    expect((await as(servers[0]!, 'stranger')('GET', '/api/v1/namespaces/default/configmaps')).status).toBe(403);
  });

  it('Webhook: allowed and denied answers decide, v1beta1 reviews are sent, and answers are cached', async () => {
    const server = servers[0]!;
    const before = calls.length;
    expect((await as(server, 'web-allow', ['devs'])('DELETE', '/api/v1/namespaces/default/configmaps/x')).status).toBe(
      404,
    );
    expect(calls.length).toBe(before + 1);
    expect(calls[calls.length - 1]!.body).toEqual({
      apiVersion: 'authorization.platform/v1beta1',
      kind: 'SubjectAccessReview',
      spec: {
        resourceAttributes: {
          namespace: 'default',
          verb: 'delete',
          group: '',
          version: 'v1',
          resource: 'configmaps',
          subresource: '',
          name: 'x',
        },
        user: 'web-allow',
        group: ['devs', 'system:authenticated'],
      },
    });
    expect((await as(server, 'web-allow', ['devs'])('DELETE', '/api/v1/namespaces/default/configmaps/x')).status).toBe(
      404,
    );
    expect(calls.length).toBe(before + 1); // cached
    // A denial ends the chain: the ABAC policy that would allow web-deny is never reached.
    const denied = await as(server, 'web-deny')('GET', '/api/v1/namespaces/default/configmaps');
    expect([denied.status, denied.json.message]).toEqual([
      403,
      'configmaps is forbidden: User "web-deny" cannot list resource "configmaps" in API group "" in the namespace "default": the webhook says no',
    ]);
  });

  it('Webhook: one that times out or answers garbage has no opinion, and the server goes on serving', async () => {
    const server = servers[0]!;
    const slow = await as(server, 'slow')('GET', '/api/v1/namespaces/default/configmaps');
    expect(slow.status).toBe(403);
    expect(slow.json.message).toContain('webhook authorizer: no answer within 300 ms');
    const garbage = await as(server, 'garbage')('GET', '/api/v1/namespaces/default/configmaps');
    expect(garbage.status).toBe(403);
    expect(garbage.json.message).toContain('webhook authorizer: the answer is not JSON');
    expect((await as(server, 'reader')('GET', '/api/v1/namespaces/default/configmaps')).status).toBe(200);
    // An access review reports the failure as its evaluation error.
    const review = await as(server, 'root', ['system:masters'])(
      'POST',
      '/apis/authorization.platform/v1/subjectaccessreviews',
      {
        apiVersion: 'authorization.platform/v1',
        kind: 'SubjectAccessReview',
        spec: { user: 'garbage', nonResourceAttributes: { path: '/x', verb: 'get' } },
      },
    );
    expect(review.json.status).toMatchObject({ allowed: false, evaluationError: expect.stringContaining('not JSON') });
    expect(server.errors).toEqual([]);
  });
});
