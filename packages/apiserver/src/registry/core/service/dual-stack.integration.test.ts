/**
 * Dual-stack services (IPv6DualStack, as Kubernetes 1.21): with `--service-cluster-ip-range=<IPv4>,<IPv6>`, services
 * get the families their `ipFamilyPolicy` asks for, an address of each, and give them back when they go.
 */
import { startTestServer, type TestServer } from '../../../testing/test-server';

const SVCS = '/api/v1/namespaces/default/services';
const svc = (name: string, spec: object = {}): object => ({
  metadata: { name },
  spec: { ports: [{ port: 80 }], ...spec },
});
const causes = (s: { details?: { causes?: { field: string; message: string }[] } }): string[] =>
  (s.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`);

describe('a dual-stack cluster', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer((c) => {
      c.services = { clusterIPRange: '10.8.0.0/28,fd00:10::/120' };
    });
  }, 60_000);
  afterAll(async () => {
    await t.stop();
    expect(t.errors).toEqual([]);
  });

  it('gives a service the primary family by default', async () => {
    const r = await t.request('POST', SVCS, { body: svc('single') });
    expect(r.status).toBe(201);
    expect(r.json.spec).toMatchObject({ ipFamilyPolicy: 'SingleStack', ipFamilies: ['IPv4'] });
    expect(r.json.spec.clusterIPs).toEqual([r.json.spec.clusterIP]);
    expect(r.json.spec.clusterIP).toMatch(/^10\.8\.0\./);
  });

  it('gives both families to PreferDualStack and RequireDualStack services', async () => {
    for (const policy of ['PreferDualStack', 'RequireDualStack']) {
      const r = await t.request('POST', SVCS, { body: svc(policy.toLowerCase(), { ipFamilyPolicy: policy }) });
      expect(r.status).toBe(201);
      expect(r.json.spec.ipFamilies).toEqual(['IPv4', 'IPv6']);
      expect(r.json.spec.clusterIPs).toHaveLength(2);
      expect(r.json.spec.clusterIPs[1]).toMatch(/^fd00:10::[0-9a-f]+$/);
    }
  });

  it('puts IPv6 first when asked, and honours requested addresses', async () => {
    // Addresses no service holds yet: the earlier ones got random addresses of the (small) ranges.
    const held = new Set(
      ((await t.request('GET', '/api/v1/services')).json.items as { spec: { clusterIPs?: string[] } }[]).flatMap(
        (s) => s.spec.clusterIPs ?? [],
      ),
    );
    const v6 = ['fd00:10::99', 'fd00:10::98', 'fd00:10::97'].find((ip) => !held.has(ip))!;
    const v4 = ['10.8.0.9', '10.8.0.10', '10.8.0.11', '10.8.0.12'].find((ip) => !held.has(ip))!;
    const r = await t.request('POST', SVCS, {
      body: svc('v6first', { ipFamilies: ['IPv6', 'IPv4'], clusterIPs: [v6, v4] }),
    });
    expect(r.status).toBe(201);
    expect(r.json.spec).toMatchObject({
      ipFamilyPolicy: 'RequireDualStack',
      ipFamilies: ['IPv6', 'IPv4'],
      clusterIP: v6,
      clusterIPs: [v6, v4],
    });
    const taken = await t.request('POST', SVCS, { body: svc('again', { clusterIP: v6 }) });
    expect(taken.status).toBe(422);
    expect(causes(taken.json)).toEqual([
      `spec.clusterIPs[0]: Invalid value: "${v6}": provided IP is already allocated`,
    ]);
  });

  it('refuses families that disagree with the addresses or with the policy', async () => {
    const r1 = await t.request('POST', SVCS, {
      body: svc('bad1', { ipFamilies: ['IPv4'], clusterIPs: ['fd00:10::5'] }),
    });
    expect(r1.status).toBe(422);
    expect(causes(r1.json)[0]).toContain('expected an IPv4 value as indicated by `ipFamilies[0]`');
    const r2 = await t.request('POST', SVCS, {
      body: svc('bad2', { ipFamilyPolicy: 'SingleStack', ipFamilies: ['IPv4', 'IPv6'] }),
    });
    expect(r2.status).toBe(422);
    expect(causes(r2.json)[0]).toContain("must be 'RequireDualStack' or 'PreferDualStack'");
    const r3 = await t.request('POST', SVCS, { body: svc('bad3', { clusterIPs: ['10.8.0.3', '10.8.0.4'] }) });
    expect(r3.status).toBe(422);
  });

  it('upgrades a service to dual stack and downgrades it again, releasing the second address', async () => {
    const created = await t.request('POST', SVCS, { body: svc('updown') });
    const up = await t.request('PATCH', `${SVCS}/updown`, {
      body: { spec: { ipFamilyPolicy: 'PreferDualStack' } },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(up.status).toBe(200);
    expect(up.json.spec.clusterIPs).toEqual([created.json.spec.clusterIP, expect.stringMatching(/^fd00:10::/)]);
    const secondary = up.json.spec.clusterIPs[1];
    const down = await t.request('PATCH', `${SVCS}/updown`, {
      body: { spec: { ipFamilyPolicy: 'SingleStack' } },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(down.status).toBe(200);
    expect(down.json.spec).toMatchObject({ ipFamilies: ['IPv4'], clusterIPs: [created.json.spec.clusterIP] });
    // The released address can be had again.
    const reuse = await t.request('POST', SVCS, {
      body: svc('reuse', { ipFamilies: ['IPv6'], clusterIPs: [secondary] }),
    });
    expect(reuse.status).toBe(201);
  });

  it('releases both addresses on delete', async () => {
    const r = await t.request('POST', SVCS, { body: svc('gone', { ipFamilyPolicy: 'RequireDualStack' }) });
    expect((await t.request('DELETE', `${SVCS}/gone`)).status).toBe(200);
    const again = await t.request('POST', SVCS, {
      body: svc('gone2', { ipFamilyPolicy: 'RequireDualStack', clusterIPs: r.json.spec.clusterIPs }),
    });
    expect(again.status).toBe(201);
  });
});

it('refuses RequireDualStack on a single-stack cluster and families it lacks', async () => {
  const t = await startTestServer();
  try {
    const r = await t.request('POST', SVCS, { body: svc('x', { ipFamilyPolicy: 'RequireDualStack' }) });
    expect(r.status).toBe(422);
    expect(causes(r.json)).toContain(
      'spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services',
    );
    const v6 = await t.request('POST', SVCS, { body: svc('y', { ipFamilies: ['IPv6'] }) });
    expect(causes(v6.json)).toEqual(['spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster']);
    // PreferDualStack falls back to the one family there is.
    const prefer = await t.request('POST', SVCS, { body: svc('z', { ipFamilyPolicy: 'PreferDualStack' }) });
    expect([prefer.status, prefer.json.spec.ipFamilies]).toEqual([201, ['IPv4']]);
  } finally {
    await t.stop();
  }
}, 60_000);
