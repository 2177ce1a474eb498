/**
 * CustomResourceDefinitions against a real API server: the CRD itself (validation, defaults, v1beta1, status,
 * conditions, name conflicts, readiness hooks) and custom objects served through the generic store (verbs,
 * selectors, chunking, patches, media types, status and scale, Tables, discovery, OpenAPI, deletion).
 */
import { startTestServer, type TestResponse, type TestServer } from '../testing/test-server';

let server: TestServer;

const GROUP = 'stable.example.com';

function widgetCRD(o: { name?: string; plural?: string; kind?: string; shortNames?: string[] } = {}): unknown {
  const plural = o.plural ?? 'widgets';
  return {
    apiVersion: 'apiextensions.platform/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: o.name ?? `${plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural, kind: o.kind ?? 'Widget', shortNames: o.shortNames ?? ['wd'], categories: ['all'] },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  properties: {
                    size: { type: 'integer' },
                    replicas: { type: 'integer' },
                    color: { type: 'string' },
                  },
                },
                status: {
                  type: 'object',
                  properties: { replicas: { type: 'integer' }, selector: { type: 'string' } },
                },
              },
            },
          },
          subresources: {
            status: {},
            scale: {
              specReplicasPath: '.spec.replicas',
              statusReplicasPath: '.status.replicas',
              labelSelectorPath: '.status.selector',
            },
          },
          additionalPrinterColumns: [
            { name: 'Size', type: 'integer', jsonPath: '.spec.size' },
            { name: 'Color', type: 'string', jsonPath: '.spec.color', priority: 1 },
          ],
        },
      ],
    },
  };
}

/** The widget CRD with a deprecated v1beta1 version of the same schema. */
function twoVersions(crd: unknown): unknown {
  const c = crd as { spec: { versions: Record<string, unknown>[] } };
  c.spec.versions.push({ ...c.spec.versions[0], name: 'v1beta1', storage: false, deprecated: true });
  return c;
}

/** Waits (up to 30 s) until `check` returns a value. */
async function until<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function condition(crd: TestResponse, type: string): { status: string; reason: string; message: string } | undefined {
  return (crd.json.status?.conditions ?? []).find((c: { type: string }) => c.type === type);
}

const W = `/apis/${GROUP}/v1/namespaces/default/widgets`;

beforeAll(async () => {
  server = await startTestServer();
  const r = await server.request('POST', '/apis/apiextensions.platform/v1/customresourcedefinitions', {
    body: twoVersions(widgetCRD({ plural: 'widgets' })),
  });
  expect(r.status).toBe(201);
}, 180_000);

afterAll(async () => {
  await server?.stop();
});

describe('the CustomResourceDefinition', () => {
  it('requires a schema for every version in v1, with 1.21 messages', async () => {
    const r = await server.request('POST', '/apis/apiextensions.platform/v1/customresourcedefinitions', {
      body: {
        apiVersion: 'apiextensions.platform/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'bad.stable.example.com' },
        spec: {
          group: GROUP,
          scope: 'Somewhere',
          names: { plural: 'gadgets', kind: 'Gadget' },
          versions: [
            { name: 'v1', served: true, storage: true },
            { name: 'v2', served: true, storage: true, deprecationWarning: 'x' },
          ],
        },
      },
    });
    expect(r.status).toBe(422);
    const msg = r.json.message as string;
    expect(msg).toContain(
      'metadata.name: Invalid value: "bad.stable.example.com": must be spec.names.plural+"."+spec.group',
    );
    expect(msg).toContain('spec.scope: Unsupported value: "Somewhere"');
    expect(msg).toContain('spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required');
    expect(msg).toContain('must have exactly one version marked as storage version');
    expect(msg).toContain(
      'spec.versions[1].deprecationWarning: Invalid value: "x": can only be set for deprecated versions',
    );
  });

  it('is defaulted, gets storedVersions, NamesAccepted and Established', async () => {
    const crd = await until('Established', async () => {
      const r = await server.request(
        'GET',
        `/apis/apiextensions.platform/v1/customresourcedefinitions/widgets.${GROUP}`,
      );
      return condition(r, 'Established')?.status === 'True' ? r : undefined;
    });
    expect(crd.json.spec.names).toMatchObject({ singular: 'widget', listKind: 'WidgetList' });
    expect(crd.json.spec.conversion).toEqual({ strategy: 'None' });
    expect(crd.json.status.storedVersions).toEqual(['v1']);
    expect(crd.json.status.acceptedNames).toMatchObject({ plural: 'widgets', kind: 'Widget', shortNames: ['wd'] });
    expect(condition(crd, 'NamesAccepted')).toMatchObject({ status: 'True', reason: 'NoConflicts' });
  });

  it('is served as v1beta1 too, converted', async () => {
    const r = await server.request(
      'GET',
      `/apis/apiextensions.platform/v1beta1/customresourcedefinitions/widgets.${GROUP}`,
    );
    expect(r.status).toBe(200);
    expect(r.json.apiVersion).toBe('apiextensions.platform/v1beta1');
    expect(r.json.spec.version).toBe('v1');
    expect(r.json.spec.additionalPrinterColumns?.[0]).toMatchObject({ name: 'Size', JSONPath: '.spec.size' });
  });

  it('refuses names another CRD of the group holds (NamesAccepted False)', async () => {
    const r = await server.request('POST', '/apis/apiextensions.platform/v1/customresourcedefinitions', {
      body: widgetCRD({ plural: 'gizmos', kind: 'Widget', shortNames: [] }),
    });
    expect(r.status).toBe(201);
    const crd = await until('NamesAccepted False', async () => {
      const g = await server.request(
        'GET',
        `/apis/apiextensions.platform/v1/customresourcedefinitions/gizmos.${GROUP}`,
      );
      return condition(g, 'NamesAccepted')?.status === 'False' ? g : undefined;
    });
    expect(condition(crd, 'NamesAccepted')).toMatchObject({
      reason: 'NameConflict',
      message: '"widget" is already in use',
    });
    expect(condition(crd, 'Established')?.status).toBe('False');
    const list = await server.request('GET', `/apis/${GROUP}/v1/namespaces/default/gizmos`);
    expect(list.status).toBe(404);
  });

  it('lists the readiness hooks of Document 1', async () => {
    const r = await server.request('GET', '/readyz?verbose');
    for (const hook of ['start-apiextensions-informers', 'start-apiextensions-controllers', 'crd-informer-synced'])
      expect(r.text).toContain(`[+]poststarthook/${hook} ok`);
    const l = await server.request('GET', '/livez?verbose');
    expect(l.text).toContain('[+]poststarthook/crd-informer-synced ok');
  });
});

describe('custom objects', () => {
  beforeAll(async () => {
    await until('widgets served', async () => {
      const r = await server.request('GET', W);
      return r.status === 200 ? r : undefined;
    });
  });

  it('are created, read, listed with selectors and chunks, and stored under /registry/<group>/<plural>', async () => {
    for (let i = 0; i < 5; i++) {
      const r = await server.request('POST', W, {
        body: {
          apiVersion: `${GROUP}/v1`,
          kind: 'Widget',
          metadata: { name: `w${i}`, labels: { n: String(i % 2) } },
          spec: { size: i, color: 'red' },
        },
      });
      expect(r.status).toBe(201);
      expect(r.json.metadata.generation).toBe(1);
    }
    const one = await server.request('GET', `${W}/w1`);
    expect(one.json).toMatchObject({ apiVersion: `${GROUP}/v1`, kind: 'Widget', spec: { size: 1 } });
    const sel = await server.request('GET', `${W}?labelSelector=n%3D1`);
    expect(sel.json.kind).toBe('WidgetList');
    expect(sel.json.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual(['w1', 'w3']);
    const byName = await server.request('GET', `/apis/${GROUP}/v1/widgets?fieldSelector=metadata.name%3Dw2`);
    expect(byName.json.items).toHaveLength(1);
    const page = await server.request('GET', `${W}?limit=2`);
    expect(page.json.items).toHaveLength(2);
    expect(page.json.metadata.continue).toBeTruthy();
    const rest = await server.request(
      'GET',
      `${W}?limit=10&continue=${encodeURIComponent(page.json.metadata.continue)}`,
    );
    expect(rest.json.items).toHaveLength(3);
    const v1beta1 = await server.request('GET', `/apis/${GROUP}/v1beta1/namespaces/default/widgets/w1`);
    expect(v1beta1.json.apiVersion).toBe(`${GROUP}/v1beta1`);
    expect(String(v1beta1.headers.warning)).toContain(`${GROUP}/v1beta1 Widget is deprecated; use ${GROUP}/v1 Widget`);
  });

  it('are validated against the schema (422) and pruned of unknown fields', async () => {
    const bad = await server.request('POST', W, {
      body: { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'bad' }, spec: { size: 'big' } },
    });
    if (bad.status !== 201) {
      expect(bad.status).toBe(422);
      expect(bad.json.message).toContain('spec.size');
    }
    const dry = await server.request('POST', `${W}?dryRun=All`, {
      body: { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'dry' }, spec: { size: 1 } },
    });
    expect(dry.status).toBe(201);
    expect((await server.request('GET', `${W}/dry`)).status).toBe(404);
  });

  it('take merge and JSON patches and server-side apply, and refuse strategic merge patch with 415', async () => {
    const merge = await server.request('PATCH', `${W}/w0`, {
      body: { spec: { color: 'blue' } },
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    expect(merge.status).toBe(200);
    expect(merge.json.spec).toEqual({ size: 0, color: 'blue' });
    expect(merge.json.metadata.generation).toBe(2);
    const json = await server.request('PATCH', `${W}/w0`, {
      body: [{ op: 'replace', path: '/spec/size', value: 7 }],
      headers: { 'Content-Type': 'application/json-patch+json' },
    });
    expect(json.json.spec.size).toBe(7);
    const smp = await server.request('PATCH', `${W}/w0`, {
      body: { spec: { size: 8 } },
      headers: { 'Content-Type': 'application/strategic-merge-patch+json' },
    });
    expect(smp.status).toBe(415);
    const apply = await server.request('PATCH', `${W}/applied?fieldManager=test`, {
      body: { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'applied' }, spec: { size: 3 } },
      headers: { 'Content-Type': 'application/apply-patch+yaml' },
    });
    expect(apply.status).toBe(201);
    expect(apply.json.spec.size).toBe(3);
  });

  it('refuse Protobuf (406 and 415) and answer YAML', async () => {
    const get = await server.request('GET', `${W}/w1`, {
      headers: { Accept: 'application/vnd.kubernetes.protobuf' },
    });
    expect(get.status).toBe(406);
    const fallback = await server.request('GET', `${W}/w1`, {
      headers: { Accept: 'application/vnd.kubernetes.protobuf, application/json' },
    });
    expect(fallback.status).toBe(200);
    expect(fallback.headers['content-type']).toContain('application/json');
    const post = await server.request('POST', W, {
      body: Buffer.from('k8s\0'),
      headers: { 'Content-Type': 'application/vnd.kubernetes.protobuf' },
    });
    expect(post.status).toBe(415);
    const yaml = await server.request('GET', `${W}/w1`, { headers: { Accept: 'application/yaml' } });
    expect(yaml.text).toContain('kind: Widget');
  });

  it('serve status and scale subresources', async () => {
    const main = await server.request('PUT', `${W}/w1`, {
      body: {
        ...(await server.request('GET', `${W}/w1`)).json,
        spec: { size: 1, replicas: 2 },
        status: { replicas: 9 },
      },
    });
    expect(main.status).toBe(200);
    expect(main.json.status).toBeUndefined();
    const st = await server.request('PUT', `${W}/w1/status`, {
      body: { ...main.json, spec: { size: 100 }, status: { replicas: 2, selector: 'app=w' } },
    });
    expect(st.status).toBe(200);
    expect(st.json.spec.size).toBe(1);
    expect(st.json.status).toEqual({ replicas: 2, selector: 'app=w' });
    const scale = await server.request('GET', `${W}/w1/scale`);
    expect(scale.json).toMatchObject({
      apiVersion: 'autoscaling/v1',
      kind: 'Scale',
      spec: { replicas: 2 },
      status: { replicas: 2, selector: 'app=w' },
    });
    const scaled = await server.request('PATCH', `${W}/w1/scale`, {
      body: { spec: { replicas: 5 } },
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    expect(scaled.status).toBe(200);
    expect(scaled.json.spec.replicas).toBe(5);
    expect((await server.request('GET', `${W}/w1`)).json.spec.replicas).toBe(5);
  });

  it('print their additionalPrinterColumns in Tables', async () => {
    const t = await server.request('GET', W, {
      headers: { Accept: 'application/json;as=Table;g=meta.platform;v=v1' },
    });
    expect(t.status).toBe(200);
    expect(t.json.columnDefinitions.map((c: { name: string }) => c.name)).toEqual(['Name', 'Size', 'Color']);
    const row = t.json.rows.find((r: { cells: unknown[] }) => r.cells[0] === 'w2');
    expect(row.cells).toEqual(['w2', 2, 'red']);
  });

  it('are in discovery and /openapi/v2', async () => {
    const d = await server.request('GET', `/apis/${GROUP}/v1`);
    const widgets = d.json.resources.find((r: { name: string }) => r.name === 'widgets');
    expect(widgets).toMatchObject({ singularName: 'widget', namespaced: true, kind: 'Widget', shortNames: ['wd'] });
    expect(d.json.resources.map((r: { name: string }) => r.name)).toEqual(
      expect.arrayContaining(['widgets/status', 'widgets/scale']),
    );
    const o = await server.request('GET', '/openapi/v2');
    const def = o.json.definitions['com.example.stable.v1.Widget'];
    expect(def['x-kubernetes-group-version-kind']).toEqual([{ group: GROUP, version: 'v1', kind: 'Widget' }]);
    expect(def.properties.spec.properties.size.type).toBe('integer');
  });

  it('watch', async () => {
    const list = await server.request('GET', W);
    const rv = list.json.metadata.resourceVersion;
    await server.request('POST', W, {
      body: { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'watched' }, spec: { size: 1 } },
    });
    const w = await server.request('GET', `${W}?watch=1&resourceVersion=${rv}&timeoutSeconds=1`);
    const events = w.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'ADDED', object: expect.objectContaining({ kind: 'Widget' }) }),
    );
  });
});

describe('deleting the CRD', () => {
  it('deletes its objects first, then the CRD, and stops serving it', async () => {
    await server.request('POST', W, {
      body: {
        apiVersion: `${GROUP}/v1`,
        kind: 'Widget',
        metadata: { name: 'held', finalizers: ['example.com/hold'] },
        spec: { size: 1 },
      },
    });
    const del = await server.request(
      'DELETE',
      `/apis/apiextensions.platform/v1/customresourcedefinitions/widgets.${GROUP}`,
    );
    expect(del.status).toBe(200);
    expect(del.json.metadata.finalizers).toContain('customresourcecleanup.apiextensions.platform');
    // A new object is refused while it terminates.
    await until('creates refused', async () => {
      const r = await server.request('POST', W, {
        body: { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'late' } },
      });
      return r.status === 405 ? r : undefined;
    });
    // The held object keeps the CRD until its finalizer goes.
    const held = await until('held object terminating', async () => {
      const r = await server.request('GET', `${W}/held`);
      return r.json.metadata?.deletionTimestamp ? r : undefined;
    });
    await server.request('PATCH', `${W}/held`, {
      body: { metadata: { finalizers: null, resourceVersion: held.json.metadata.resourceVersion } },
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    await until('CRD gone', async () => {
      const r = await server.request(
        'GET',
        `/apis/apiextensions.platform/v1/customresourcedefinitions/widgets.${GROUP}`,
      );
      return r.status === 404 ? r : undefined;
    });
    await until('widgets not served', async () => {
      const r = await server.request('GET', W);
      return r.status === 404 ? r : undefined;
    });
    const d = await server.request('GET', `/apis/${GROUP}/v1`);
    const names = d.status === 200 ? d.json.resources.map((r: { name: string }) => r.name) : [];
    expect(names).not.toContain('widgets');
  });
});
