/**
 * The optional namespace plugins and AlwaysDeny on a real server: NamespaceAutoProvision creates a missing namespace
 * (never for a dry-run), NamespaceExists refuses requests in missing namespaces, AlwaysDeny refuses writes but not
 * reads. Also ServiceAccount's mountable-secrets restriction.
 */
import { startTestServer, type TestServer } from '../testing/test-server';
import { DEFAULT_ADMISSION_SETTINGS } from './server-admission';

describe('NamespaceAutoProvision and NamespaceExists', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer((c) => {
      c.admission = {
        plugins: ['NamespaceAutoProvision', 'NamespaceExists', 'ServiceAccount'],
        settings: DEFAULT_ADMISSION_SETTINGS,
      };
    });
  }, 30_000);
  afterAll(async () => {
    await s?.stop();
    expect(s?.errors ?? []).toEqual([]);
  });

  it('creates the namespace of a create, but not for a dry-run', async () => {
    let r = await s.request('POST', '/api/v1/namespaces/dry/configmaps?dryRun=All', {
      body: { metadata: { name: 'a' } },
    });
    expect(r.status).toBe(404);
    expect(r.json.message).toBe('namespaces "dry" not found');
    expect((await s.request('GET', '/api/v1/namespaces/dry')).status).toBe(404);
    r = await s.request('POST', '/api/v1/namespaces/fresh/configmaps', { body: { metadata: { name: 'a' } } });
    expect(r.status).toBe(201);
    expect((await s.request('GET', '/api/v1/namespaces/fresh')).status).toBe(200);
  });

  it('refuses creates in a namespace that does not exist when the namespace cannot be provisioned (dry-run)', async () => {
    const r = await s.request('POST', '/api/v1/namespaces/ghost/secrets?dryRun=All', {
      body: { metadata: { name: 'a' } },
    });
    expect([r.status, r.json.reason, r.json.message]).toEqual([404, 'NotFound', 'namespaces "ghost" not found']);
  });

  it('keeps pods to the secrets of a service account that enforces mountable secrets', async () => {
    await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'strict' } } });
    await s.request('POST', '/api/v1/namespaces/strict/serviceaccounts', {
      body: {
        metadata: { name: 'default', annotations: { 'kubernetes.io/enforce-mountable-secrets': 'true' } },
        secrets: [{ name: 'allowed' }],
      },
    });
    const pod = (secret: string): object => ({
      metadata: { name: `p-${secret}` },
      spec: {
        automountServiceAccountToken: false,
        containers: [{ name: 'c', image: 'x' }],
        volumes: [{ name: 's', secret: { secretName: secret } }],
      },
    });
    expect((await s.request('POST', '/api/v1/namespaces/strict/pods', { body: pod('allowed') })).status).toBe(201);
    const r = await s.request('POST', '/api/v1/namespaces/strict/pods', { body: pod('other') });
    expect([r.status, r.json.message]).toEqual([
      403,
      'pods "p-other" is forbidden: volume s references secret other, which is not allowed because service account default does not reference that secret',
    ]);
  });
});

describe('AlwaysDeny', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer((c) => {
      c.admission = { plugins: ['AlwaysDeny'], settings: DEFAULT_ADMISSION_SETTINGS };
    });
  }, 30_000);
  afterAll(async () => {
    await s?.stop();
  });

  it('refuses creates, updates and deletes, and lets reads through', async () => {
    let r = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'a' } } });
    expect([r.status, r.json.message]).toEqual([
      403,
      'configmaps "a" is forbidden: admission control is denying all modifications',
    ]);
    r = await s.request('PATCH', '/api/v1/namespaces/default', {
      body: { metadata: { labels: { a: 'b' } } },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(r.status).toBe(403);
    r = await s.request('DELETE', '/api/v1/namespaces/default/configmaps/a');
    expect(r.status).toBe(403);
    expect((await s.request('GET', '/api/v1/namespaces/default')).status).toBe(200);
  });
});
