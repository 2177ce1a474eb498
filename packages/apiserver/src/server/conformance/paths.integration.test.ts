/**
 * Document 1, "Path shapes", discovery, `/version`, `/openapi/v2` and the health endpoints: every path shape (core
 * and named groups, cluster and namespace scope, lists across namespaces, subresources of both scopes), the
 * discovery documents kubectl reads, and the OpenAPI document as JSON and as gnostic Protobuf. Runs on both stores.
 */
import { decodeOpenApiProtobuf, OPENAPI_PROTOBUF_MEDIA_TYPE } from '../../endpoints/openapi';
import { configMap, freshNamespace, itemNames, mustCreate, STORES, useServer } from './harness';

type Resource = {
  name: string;
  kind: string;
  namespaced: boolean;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  group?: string;
  version?: string;
};

const deployment = (name: string) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
  },
});

describe.each(STORES)('paths on %s', (store) => {
  const server = useServer(store);
  let a: string;
  let b: string;
  beforeAll(async () => {
    const t = server();
    [a, b] = [await freshNamespace(t, 'path'), await freshNamespace(t, 'path')];
    await mustCreate(t, `/api/v1/namespaces/${a}/configmaps`, configMap('in-a'));
    await mustCreate(t, `/api/v1/namespaces/${b}/configmaps`, configMap('in-b'));
    await mustCreate(t, `/apis/apps/v1/namespaces/${a}/deployments`, deployment('web'));
    await mustCreate(t, '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1' } });
  });

  describe('resource paths', () => {
    it.each([
      ['core, namespaced collection', () => `/api/v1/namespaces/${a}/configmaps`, 'ConfigMapList'],
      ['core, namespaced object', () => `/api/v1/namespaces/${a}/configmaps/in-a`, 'ConfigMap'],
      ['core, cluster collection', () => '/api/v1/nodes', 'NodeList'],
      ['core, cluster object', () => '/api/v1/nodes/node-1', 'Node'],
      ['core, a namespace', () => `/api/v1/namespaces/${a}`, 'Namespace'],
      ['group, namespaced collection', () => `/apis/apps/v1/namespaces/${a}/deployments`, 'DeploymentList'],
      ['group, namespaced object', () => `/apis/apps/v1/namespaces/${a}/deployments/web`, 'Deployment'],
      ['group, cluster collection', () => '/apis/rbac.authorization.platform/v1/clusterroles', 'ClusterRoleList'],
      ['group, cluster object', () => '/apis/rbac.authorization.platform/v1/clusterroles/admin', 'ClusterRole'],
      ['namespaced subresource', () => `/apis/apps/v1/namespaces/${a}/deployments/web/status`, 'Deployment'],
      ['namespaced subresource of another kind', () => `/apis/apps/v1/namespaces/${a}/deployments/web/scale`, 'Scale'],
      ['cluster subresource', () => '/api/v1/nodes/node-1/status', 'Node'],
      ['cluster subresource of namespaces', () => `/api/v1/namespaces/${a}/status`, 'Namespace'],
    ])('%s', async (_what, path, kind) => {
      const r = await server().request('GET', path());
      expect([r.status, r.json.kind]).toEqual([200, kind]);
    });

    it('lists across all namespaces, core and named groups', async () => {
      const t = server();
      const all = (await t.request('GET', '/api/v1/configmaps')).json;
      expect(all.kind).toBe('ConfigMapList');
      const ours = (all.items as { metadata: { namespace: string; name: string } }[])
        .filter((i) => i.metadata.namespace === a || i.metadata.namespace === b)
        .map((i) => `${i.metadata.namespace}/${i.metadata.name}`);
      expect(ours).toEqual([`${a}/in-a`, `${b}/in-b`]);
      expect(itemNames((await t.request('GET', '/apis/apps/v1/deployments')).json)).toContain('web');
    });

    it('has the Scale subresource read and write the replicas', async () => {
      const t = server();
      const path = `/apis/apps/v1/namespaces/${a}/deployments/web/scale`;
      const scale = (await t.request('GET', path)).json;
      expect(scale).toMatchObject({ apiVersion: 'autoscaling/v1', kind: 'Scale', spec: { replicas: 1 } });
      const put = await t.request('PUT', path, { body: { ...scale, spec: { replicas: 3 } } });
      expect([put.status, put.json.spec.replicas]).toEqual([200, 3]);
      expect((await t.request('GET', `/apis/apps/v1/namespaces/${a}/deployments/web`)).json.spec.replicas).toBe(3);
    });

    it('binds a pod through its binding subresource (a create on a named path)', async () => {
      const t = server();
      const pods = `/api/v1/namespaces/${a}/pods`;
      await mustCreate(t, pods, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'unbound' },
        spec: { containers: [{ name: 'c', image: 'busybox' }] },
      });
      const r = await t.request('POST', `${pods}/unbound/binding`, {
        body: {
          apiVersion: 'v1',
          kind: 'Binding',
          metadata: { name: 'unbound' },
          target: { apiVersion: 'v1', kind: 'Node', name: 'node-1' },
        },
      });
      expect(r.status).toBe(201);
      expect((await t.request('GET', `${pods}/unbound`)).json.spec.nodeName).toBe('node-1');
    });

    it.each([
      ['a namespaced object without its namespace', '/api/v1/configmaps/in-a'],
      ['a cluster-scoped resource under a namespace', `/api/v1/namespaces/default/nodes`],
      ['a cluster-scoped object under a namespace', `/api/v1/namespaces/default/nodes/node-1`],
      ['a group resource under /api', '/api/v1/deployments'],
      ['a core resource under /apis', '/apis/v1/configmaps'],
      ['a subresource of a collection', '/api/v1/nodes/status'],
    ])('answers 404 for %s', async (_what, path) => {
      const r = await server().request('GET', path);
      expect([r.status, r.json?.kind, r.json?.reason]).toEqual([404, 'Status', 'NotFound']);
    });
  });

  describe('discovery', () => {
    it('serves /api and /api/v1', async () => {
      const t = server();
      expect((await t.request('GET', '/api')).json).toMatchObject({
        kind: 'APIVersions',
        versions: ['v1'],
        serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: expect.any(String) }],
      });
      const v1 = (await t.request('GET', '/api/v1')).json;
      expect([v1.kind, v1.groupVersion]).toEqual(['APIResourceList', 'v1']);
      const byName = new Map((v1.resources as Resource[]).map((r) => [r.name, r]));
      expect(byName.get('pods')).toMatchObject({
        kind: 'Pod',
        namespaced: true,
        shortNames: ['po'],
        categories: ['all'],
        verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
      });
      expect(byName.get('nodes')).toMatchObject({ kind: 'Node', namespaced: false, shortNames: ['no'] });
      expect(byName.get('namespaces')).toMatchObject({ namespaced: false, shortNames: ['ns'] });
      expect(byName.get('pods/status')).toMatchObject({ kind: 'Pod', verbs: ['get', 'patch', 'update'] });
      expect(byName.get('pods/binding')).toMatchObject({ kind: 'Binding', verbs: ['create'] });
      expect(byName.get('replicationcontrollers/scale')).toMatchObject({
        kind: 'Scale',
        group: 'autoscaling',
        version: 'v1',
      });
    });

    it('serves /apis, /apis/<group> and /apis/<group>/<version> with the renamed groups', async () => {
      const t = server();
      const groups = (await t.request('GET', '/apis')).json;
      expect(groups.kind).toBe('APIGroupList');
      const names = (groups.groups as { name: string }[]).map((g) => g.name);
      expect(names).toEqual(
        expect.arrayContaining([
          'apps',
          'batch',
          'policy',
          'rbac.authorization.platform',
          'coordination.platform',
          'discovery.platform',
          'scheduling.platform',
          'authorization.platform',
          'authentication.platform',
        ]),
      );
      // The Kubernetes names only of the groups kubectl looks up by that name (group-alias.ts).
      expect(names.filter((n) => n.endsWith('.k8s.io'))).toEqual(['certificates.k8s.io']);
      const rbac = (await t.request('GET', '/apis/rbac.authorization.platform')).json;
      expect(rbac).toMatchObject({
        kind: 'APIGroup',
        name: 'rbac.authorization.platform',
        preferredVersion: { groupVersion: 'rbac.authorization.platform/v1', version: 'v1' },
      });
      const apps = (await t.request('GET', '/apis/apps/v1')).json;
      expect([apps.kind, apps.groupVersion]).toEqual(['APIResourceList', 'apps/v1']);
      const byName = new Map((apps.resources as Resource[]).map((r) => [r.name, r]));
      expect(byName.get('deployments')).toMatchObject({
        kind: 'Deployment',
        namespaced: true,
        shortNames: ['deploy'],
        categories: ['all'],
      });
      expect(byName.get('deployments/scale')).toMatchObject({ kind: 'Scale', group: 'autoscaling', version: 'v1' });
      const reviews = (await t.request('GET', '/apis/authorization.platform/v1')).json;
      const sar = (reviews.resources as Resource[]).find((r) => r.name === 'subjectaccessreviews');
      expect(sar).toMatchObject({ kind: 'SubjectAccessReview', namespaced: false, verbs: ['create'] });
    });

    it('answers YAML and Protobuf-less Accepts sensibly for discovery', async () => {
      const r = await server().request('GET', '/apis', { headers: { accept: 'application/json, */*' } });
      expect([r.status, r.headers['content-type']]).toEqual([200, 'application/json']);
    });
  });

  describe('/version and /openapi/v2', () => {
    it('serves /version', async () => {
      const r = await server().request('GET', '/version');
      expect([r.status, r.json]).toEqual([
        200,
        expect.objectContaining({
          major: expect.any(String),
          minor: expect.any(String),
          gitVersion: expect.stringMatching(/^v\d+\.\d+\.\d+/),
          platform: expect.stringContaining('/'),
        }),
      ]);
    });

    it('serves the OpenAPI document as JSON', async () => {
      const r = await server().request('GET', '/openapi/v2');
      expect([r.status, r.headers['content-type'], r.json.swagger]).toEqual([200, 'application/json', '2.0']);
      expect(r.json.definitions['io.platform.api.apps.v1.Deployment']['x-kubernetes-group-version-kind']).toEqual([
        { group: 'apps', version: 'v1', kind: 'Deployment' },
      ]);
      // The paths of the served resources, with their operations and query parameters.
      const item = r.json.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}'];
      expect(Object.keys(item).sort()).toEqual(['delete', 'get', 'parameters', 'patch', 'put']);
      expect(item.patch['x-kubernetes-group-version-kind']).toEqual({
        group: 'apps',
        version: 'v1',
        kind: 'Deployment',
      });
      expect(item.patch.parameters.map((p: { name: string }) => p.name)).toEqual([
        'body',
        'dryRun',
        'fieldManager',
        'force',
      ]);
      expect(item.patch.consumes).toContain('application/apply-patch+yaml');
      const collection = r.json.paths['/api/v1/namespaces/{namespace}/configmaps'];
      expect([
        collection.get['x-kubernetes-action'],
        collection.post['x-kubernetes-action'],
        collection.delete['x-kubernetes-action'],
      ]).toEqual(['list', 'post', 'deletecollection']);
      expect(r.json.paths['/api/v1/configmaps'].get.operationId).toBe('listCoreV1ConfigMapForAllNamespaces');
      expect(
        r.json.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale'].put[
          'x-kubernetes-group-version-kind'
        ],
      ).toEqual({ group: 'autoscaling', version: 'v1', kind: 'Scale' });
      expect(r.json.paths['/api/v1/namespaces/{namespace}/pods/{name}/binding'].post).toBeDefined();
      expect(r.json.paths['/api/v1/nodes/{name}'].get.operationId).toBe('readCoreV1Node');
    });

    it('serves the OpenAPI document as gnostic Protobuf for kubectl', async () => {
      const r = await server().request('GET', '/openapi/v2', { headers: { accept: OPENAPI_PROTOBUF_MEDIA_TYPE } });
      // (Content-Type application/octet-stream, as Kubernetes' handler sniffs it; kubectl does not read it.)
      expect(r.status).toBe(200);
      // Not the k8s envelope: the document message itself, whose field 1 is the swagger version.
      expect([...r.body.subarray(0, 5)]).toEqual([0x0a, 3, ...Buffer.from('2.0')]);
      // gnostic's Definitions: a list of named schemas.
      const doc = decodeOpenApiProtobuf(r.body) as {
        swagger: string;
        definitions: { additional_properties: { name: string }[] };
      };
      expect(doc.swagger).toBe('2.0');
      expect(doc.definitions.additional_properties.map((p) => p.name)).toEqual(
        expect.arrayContaining(['io.platform.api.core.v1.ConfigMap', 'io.platform.api.apps.v1.Deployment']),
      );
      // kubectl decides a kind supports server-side dry-run from a PATCH operation of its kind with a dryRun
      // query parameter: that is what it finds here.
      const paths = (doc as unknown as { paths: { path: { name: string; value: Record<string, unknown> }[] } }).paths
        .path;
      const item = paths.find((p) => p.name === '/apis/apps/v1/namespaces/{namespace}/deployments/{name}')?.value as {
        patch: {
          vendor_extension: { name: string; value: { yaml: string } }[];
          parameters: { parameter: { non_body_parameter?: { query_parameter_sub_schema?: { name: string } } } }[];
        };
      };
      const gvk = item.patch.vendor_extension.find((e) => e.name === 'x-kubernetes-group-version-kind');
      expect(gvk?.value.yaml).toBe('group: apps\nversion: v1\nkind: Deployment\n');
      expect(
        item.patch.parameters
          .map((p) => p.parameter.non_body_parameter?.query_parameter_sub_schema?.name)
          .filter(Boolean),
      ).toEqual(['dryRun', 'fieldManager', 'force']);
    });
  });

  describe('health', () => {
    it('serves /livez, /readyz and /healthz, each check on its own, and exclude', async () => {
      const t = server();
      for (const path of ['/livez', '/readyz', '/healthz']) {
        const r = await t.request('GET', path);
        expect([path, r.status, r.text]).toEqual([path, 200, 'ok']);
      }
      expect((await t.request('GET', '/readyz/ping')).status).toBe(200);
      expect((await t.request('GET', '/livez/store')).status).toBe(200);
      expect((await t.request('GET', '/readyz/no-such-check')).status).toBe(404);
      const excluded = await t.request('GET', '/readyz?verbose&exclude=store');
      expect(excluded.text).toContain('[+]store excluded: ok');
      expect(excluded.text).toContain('[+]ping ok');
      expect(excluded.text.trimEnd().endsWith('readyz check passed')).toBe(true);
    });
  });
});
