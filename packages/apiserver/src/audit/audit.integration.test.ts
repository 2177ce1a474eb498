/**
 * Audit on a real server: the events of real requests, parsed from the log file, per level and stage; the
 * authorizer's annotations; failed authentication; a panic; blocking-strict refusing a request it cannot record;
 * WebSocket watches; and the webhook sink against an HTTPS server on 127.0.0.1, including one that fails.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { generateSelfSignedCertKey } from '@platform/common';
import { WebSocket } from 'ws';

import { AuthenticationError, requestAuthenticator } from '../auth/authenticator';
import { type Authorizer } from '../auth/authorizer';
import { startTestServer, type TestServer } from '../testing/test-server';
import { type AuditBackend } from './backend';
import { type AuditLogConfig, DEFAULT_LOG_BATCH, DEFAULT_TRUNCATE, DEFAULT_WEBHOOK_BATCH } from './config';
import { parsePolicy } from './policy';
import { type AuditEvent, type AuditEventList } from './types';
import { loadWebhookConfig } from './webhook-backend';

const POLICY = parsePolicy(`
apiVersion: audit.platform/v1
kind: Policy
rules:
  - level: None
    nonResourceURLs: ["/readyz*", "/livez*", "/healthz*"]
  - level: RequestResponse
    resources: [{ group: "", resources: ["configmaps"] }]
  - level: Request
    resources: [{ group: "", resources: ["services"] }]
    omitStages: [RequestReceived]
  - level: None
    resources: [{ group: "", resources: ["events"] }]
  - level: Metadata
`).policy;

function logConfig(path: string, o: Partial<AuditLogConfig> = {}): AuditLogConfig {
  return {
    path,
    format: 'json',
    rotation: { maxSizeMB: 0, maxBackups: 0, maxAgeDays: 0, compress: false },
    mode: 'blocking',
    batch: DEFAULT_LOG_BATCH,
    truncate: DEFAULT_TRUNCATE,
    version: 'audit.platform/v1',
    ...o,
  };
}

function readEvents(path: string): AuditEvent[] {
  const text = readFileSync(path, 'utf8').trim();
  return text === '' ? [] : text.split('\n').map((l) => JSON.parse(l) as AuditEvent);
}

async function eventually<T>(f: () => T | undefined, what: string): Promise<T> {
  // Generous: the machine running the tests may be busy; the wait ends as soon as the condition holds.
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const v = f();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const cm = (name: string, data: Record<string, string> = { a: '1' }) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name },
  data,
});

describe('audit', () => {
  describe('log sink, blocking mode', () => {
    let server: TestServer;
    let path: string;
    /** Requests by users: `Bearer bob` is bob; `Bearer bad` is a rejected token; no token is anonymous. */
    const authenticator = requestAuthenticator(
      [
        {
          async authenticate(req) {
            const h = req.headers.authorization;
            if (h === 'Bearer bob') return { user: { name: 'bob', uid: 'u-1', groups: ['dev'] } };
            if (h === 'Bearer bad') throw new AuthenticationError('unknown token');
            return undefined;
          },
        },
      ],
      true,
    );
    const authorizer: Authorizer = {
      async authorize(a) {
        if (a.resource === 'secrets') return { decision: 'noOpinion', reason: 'secrets are off limits' };
        if (a.resource === 'limitranges') throw new Error('authorizer exploded');
        return { decision: 'allow', reason: 'test allows it' };
      },
    };

    beforeAll(async () => {
      path = join(mkdtempSync(join(tmpdir(), 'audit-it-')), 'audit.log');
      server = await startTestServer((c) => {
        c.audit = { policy: POLICY, log: logConfig(path) };
        c.security = { authenticator, authorizer };
      });
    });
    afterAll(() => server.stop());

    const eventsOf = (auditID: string) => readEvents(path).filter((e) => e.auditID === auditID);

    it('RequestResponse: both stages, the decoded request, the response object, the Audit-Id header', async () => {
      const r = await server.request('POST', '/api/v1/namespaces/default/configmaps', {
        body: cm('one'),
        headers: { 'user-agent': 'audit-test/1.0', authorization: 'Bearer bob' },
      });
      expect(r.status).toBe(201);
      const id = r.headers['audit-id'] as string;
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      const events = eventsOf(id);
      expect(events.map((e) => e.stage)).toEqual(['RequestReceived', 'ResponseComplete']);
      const [received, complete] = events as [AuditEvent, AuditEvent];
      expect(received).toEqual({
        kind: 'Event',
        apiVersion: 'audit.platform/v1',
        level: 'RequestResponse',
        auditID: id,
        stage: 'RequestReceived',
        requestURI: '/api/v1/namespaces/default/configmaps',
        verb: 'create',
        user: { username: 'bob', uid: 'u-1', groups: ['dev', 'system:authenticated'] },
        sourceIPs: ['127.0.0.1'],
        userAgent: 'audit-test/1.0',
        objectRef: { resource: 'configmaps', namespace: 'default', apiGroup: '', apiVersion: 'v1' },
        requestReceivedTimestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
        stageTimestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
      });
      // Authorization runs after RequestReceived is written, so its annotations come with the later stages.
      expect(complete.annotations).toEqual({
        'authorization.platform/decision': 'allow',
        'authorization.platform/reason': 'test allows it',
      });
      expect(complete.requestReceivedTimestamp).toBe(received.requestReceivedTimestamp);
      expect(complete.stageTimestamp >= received.stageTimestamp).toBe(true);
      expect(complete.objectRef).toEqual({
        resource: 'configmaps',
        namespace: 'default',
        name: 'one',
        apiGroup: '',
        apiVersion: 'v1',
      });
      expect(complete.responseStatus).toEqual({ metadata: {}, code: 201 });
      expect(complete.requestObject).toEqual(cm('one'));
      const created = complete.responseObject as { metadata: { uid: string; name: string } };
      expect(created.metadata.name).toBe('one');
      expect(created.metadata.uid).toBe((r.json as { metadata: { uid: string } }).metadata.uid);
    });

    it('keeps the Audit-ID a client sends', async () => {
      const r = await server.request('GET', '/api/v1/namespaces/default/configmaps/one', {
        headers: { 'audit-id': 'client-chosen-id-1' },
      });
      expect(r.headers['audit-id']).toBe('client-chosen-id-1');
      const complete = eventsOf('client-chosen-id-1').find((e) => e.stage === 'ResponseComplete')!;
      expect(complete.user).toEqual({ username: 'system:anonymous', groups: ['system:unauthenticated'] });
      expect(complete.responseObject).toMatchObject({ kind: 'ConfigMap', metadata: { name: 'one' } });
    });

    it('a failure carries its Status; a patch is recorded as sent', async () => {
      const missing = await server.request('GET', '/api/v1/namespaces/default/configmaps/nope');
      expect(missing.status).toBe(404);
      const failed = eventsOf(missing.headers['audit-id'] as string).find((e) => e.stage === 'ResponseComplete')!;
      expect(failed.responseStatus).toEqual({
        metadata: {},
        status: 'Failure',
        message: 'configmaps "nope" not found',
        reason: 'NotFound',
        details: { name: 'nope', group: '', kind: 'configmaps' },
        code: 404,
      });
      const patch = { data: { b: '2' } };
      const r = await server.request('PATCH', '/api/v1/namespaces/default/configmaps/one', {
        body: patch,
        headers: { 'content-type': 'application/merge-patch+json' },
      });
      expect(r.status).toBe(200);
      const complete = eventsOf(r.headers['audit-id'] as string).find((e) => e.stage === 'ResponseComplete')!;
      expect(complete.verb).toBe('patch');
      expect(complete.requestObject).toEqual(patch);
      expect(complete.responseObject).toMatchObject({ data: { a: '1', b: '2' } });
    });

    it('Request level: the request object without the response; omitted stages are not written', async () => {
      const svc = {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'web' },
        spec: { ports: [{ port: 80 }] },
      };
      const r = await server.request('POST', '/api/v1/namespaces/default/services', { body: svc });
      expect(r.status).toBe(201);
      const events = eventsOf(r.headers['audit-id'] as string);
      expect(events.map((e) => e.stage)).toEqual(['ResponseComplete']);
      expect(events[0]!.level).toBe('Request');
      expect(events[0]!.requestObject).toMatchObject({ kind: 'Service', metadata: { name: 'web' } });
      expect(events[0]!.responseObject).toBeUndefined();
    });

    it('Metadata level: no objects; non-resource requests have no object reference; None is not written', async () => {
      const r = await server.request('GET', '/api/v1/namespaces/default/pods');
      const complete = eventsOf(r.headers['audit-id'] as string).find((e) => e.stage === 'ResponseComplete')!;
      expect(complete.level).toBe('Metadata');
      expect(complete.verb).toBe('list');
      expect(complete.requestObject).toBeUndefined();
      expect(complete.responseObject).toBeUndefined();
      const api = await server.request('GET', '/api');
      const apiEvent = eventsOf(api.headers['audit-id'] as string).find((e) => e.stage === 'ResponseComplete')!;
      expect(apiEvent.objectRef).toBeUndefined();
      expect(apiEvent.verb).toBe('get');
      expect(apiEvent.requestURI).toBe('/api');
      const ready = await server.request('GET', '/readyz');
      expect(ready.status).toBe(200);
      expect(ready.headers['audit-id']).toBeUndefined();
      expect(readEvents(path).some((e) => e.requestURI.startsWith('/readyz'))).toBe(false);
    });

    it('a watch gets ResponseStarted when its headers go out, then ResponseComplete', async () => {
      const r = await server.request('GET', '/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1');
      expect(r.status).toBe(200);
      const events = eventsOf(r.headers['audit-id'] as string);
      expect(events.map((e) => e.stage)).toEqual(['RequestReceived', 'ResponseStarted', 'ResponseComplete']);
      expect(events[1]!.responseStatus).toEqual({ metadata: {}, code: 200 });
      expect(events[2]!.verb).toBe('watch');
    });

    it('a WebSocket watch: ResponseStarted with 101, ResponseComplete when it closes', async () => {
      const ws = new WebSocket(`${server.url.replace('https', 'wss')}/api/v1/namespaces/default/configmaps?watch=1`, {
        ca: server.ca,
        headers: { 'audit-id': 'ws-watch-1' },
      });
      await new Promise<void>((resolve, reject) => {
        ws.once('open', () => resolve());
        ws.once('error', reject);
      });
      ws.close();
      const events = await eventually(() => {
        const e = eventsOf('ws-watch-1');
        return e.length === 3 ? e : undefined;
      }, 'the WebSocket watch events');
      expect(events.map((e) => [e.stage, e.responseStatus?.code])).toEqual([
        ['RequestReceived', undefined],
        ['ResponseStarted', 101],
        ['ResponseComplete', 101],
      ]);
    });

    it('a forbidden request records the decision and the reason', async () => {
      const r = await server.request('GET', '/api/v1/namespaces/default/secrets', {
        headers: { authorization: 'Bearer bob', 'audit-id': 'forbidden-1' },
      });
      expect(r.status).toBe(403);
      const complete = eventsOf('forbidden-1').find((e) => e.stage === 'ResponseComplete')!;
      expect(complete.annotations).toEqual({
        'authorization.platform/decision': 'forbid',
        'authorization.platform/reason': 'secrets are off limits',
      });
      expect(complete.responseStatus).toMatchObject({ code: 403, reason: 'Forbidden', status: 'Failure' });
    });

    it('a request that fails authentication is one ResponseStarted event with the 401 and no user', async () => {
      const r = await server.request('GET', '/api/v1/namespaces/default/pods?who=bad', {
        headers: { authorization: 'Bearer bad' },
      });
      expect(r.status).toBe(401);
      expect(r.headers['audit-id']).toBeUndefined();
      const events = await eventually(() => {
        const e = readEvents(path).filter((x) => x.requestURI === '/api/v1/namespaces/default/pods?who=bad');
        return e.length > 0 ? e : undefined;
      }, 'the failed authentication event');
      expect(events).toEqual([
        expect.objectContaining({
          stage: 'ResponseStarted',
          level: 'Metadata',
          user: {},
          verb: 'list',
          responseStatus: { metadata: {}, message: 'Authentication failed, attempted: bearer', code: 401 },
        }),
      ]);
    });

    it('an unexpected failure is a Panic event and a 500 Status; the server goes on', async () => {
      const r = await server.request('GET', '/api/v1/namespaces/default/limitranges', {
        headers: { 'audit-id': 'panic-1' },
      });
      expect(r.status).toBe(500);
      expect(r.json).toMatchObject({ kind: 'Status', code: 500, reason: 'InternalError' });
      const events = eventsOf('panic-1');
      expect(events.map((e) => e.stage)).toEqual(['RequestReceived', 'Panic']);
      expect(events[1]!.responseStatus).toMatchObject({
        code: 500,
        message: "APIServer panic'd: authorizer exploded",
      });
      server.errors.length = 0;
      expect((await server.request('GET', '/api/v1/namespaces/default/configmaps/one')).status).toBe(200);
    });
  });

  describe('blocking-strict', () => {
    it('refuses a request whose RequestReceived event cannot be stored, and serves once it can', async () => {
      let failing = true;
      const stored: AuditEvent[] = [];
      const sink: AuditBackend = {
        processEvents: (events) => {
          if (failing) return Promise.resolve(false);
          stored.push(...events);
          return Promise.resolve(true);
        },
        shutdown: async () => {},
      };
      const server = await startTestServer((c) => {
        c.audit = { policy: POLICY, backends: [sink] };
      });
      try {
        const refused = await server.request('POST', '/api/v1/namespaces/default/configmaps', { body: cm('strict') });
        expect(refused.status).toBe(500);
        expect(refused.json).toMatchObject({
          kind: 'Status',
          reason: 'InternalError',
          message: 'Internal error occurred: failed to store audit event',
        });
        // Nothing was created.
        failing = false;
        expect((await server.request('GET', '/api/v1/namespaces/default/configmaps/strict')).status).toBe(404);
        const ok = await server.request('POST', '/api/v1/namespaces/default/configmaps', { body: cm('strict') });
        expect(ok.status).toBe(201);
        expect(stored.filter((e) => e.auditID === ok.headers['audit-id']).map((e) => e.stage)).toEqual([
          'RequestReceived',
          'ResponseComplete',
        ]);
      } finally {
        await server.stop();
      }
    });
  });

  describe('webhook sink', () => {
    let hook: Server;
    let ca: string;
    const received: AuditEventList[] = [];
    const authorizations: (string | undefined)[] = [];
    let failuresLeft = 0;

    beforeAll(async () => {
      const { certPem, keyPem } = await generateSelfSignedCertKey({ host: '127.0.0.1', alternateIPs: ['127.0.0.1'] });
      ca = certPem;
      hook = createServer({ cert: certPem, key: keyPem }, (req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          if (failuresLeft > 0) {
            failuresLeft--;
            res.statusCode = 503;
            res.end('try later');
            return;
          }
          authorizations.push(req.headers.authorization);
          received.push(JSON.parse(Buffer.concat(chunks).toString()) as AuditEventList);
          res.end('{}');
        });
      });
      await new Promise<void>((r) => hook.listen(0, '127.0.0.1', () => r()));
    });
    afterAll(() => new Promise<void>((r) => hook.close(() => r())));

    function kubeconfig(server: string): string {
      const file = join(mkdtempSync(join(tmpdir(), 'audit-hook-')), 'webhook.kubeconfig');
      writeFileSync(
        file,
        [
          'apiVersion: v1',
          'kind: Config',
          'clusters:',
          '  - name: audit',
          '    cluster:',
          `      server: ${server}`,
          `      certificate-authority-data: ${Buffer.from(ca).toString('base64')}`,
          'users:',
          '  - name: apiserver',
          '    user:',
          '      token: hook-secret',
          'contexts:',
          '  - name: default',
          '    context: { cluster: audit, user: apiserver }',
          'current-context: default',
        ].join('\n'),
      );
      return file;
    }

    it('POSTs batches as EventLists, retrying with back-off after failures', async () => {
      const port = (hook.address() as AddressInfo).port;
      failuresLeft = 2;
      const server = await startTestServer((c) => {
        c.audit = {
          policy: POLICY,
          webhook: {
            target: loadWebhookConfig(kubeconfig(`https://127.0.0.1:${port}/audit`)),
            initialBackoffMs: 10,
            mode: 'batch',
            batch: { ...DEFAULT_WEBHOOK_BATCH, maxBatchSize: 50, maxBatchWaitMs: 50 },
            truncate: DEFAULT_TRUNCATE,
            version: 'audit.platform/v1',
          },
        };
      });
      try {
        const ids: string[] = [];
        for (let i = 0; i < 5; i++) {
          const r = await server.request('POST', '/api/v1/namespaces/default/configmaps', { body: cm(`hook-${i}`) });
          expect(r.status).toBe(201);
          ids.push(r.headers['audit-id'] as string);
        }
        const got = await eventually(() => {
          const items = received.flatMap((l) => l.items).filter((e) => ids.includes(e.auditID));
          return items.length === 10 ? items : undefined;
        }, 'ten events at the webhook');
        expect(failuresLeft).toBe(0);
        expect(received.every((l) => l.kind === 'EventList' && l.apiVersion === 'audit.platform/v1')).toBe(true);
        expect(authorizations.every((a) => a === 'Bearer hook-secret')).toBe(true);
        for (const id of ids)
          expect(got.filter((e) => e.auditID === id).map((e) => e.stage)).toEqual([
            'RequestReceived',
            'ResponseComplete',
          ]);
      } finally {
        await server.stop();
      }
    });

    it('a webhook that keeps failing loses its batches with an error, and the server keeps serving', async () => {
      // A port nobody listens on: every call is refused.
      const dead = createServer();
      await new Promise<void>((r) => dead.listen(0, '127.0.0.1', () => r()));
      const port = (dead.address() as AddressInfo).port;
      await new Promise<void>((r) => dead.close(() => r()));
      const server = await startTestServer((c) => {
        c.audit = {
          policy: POLICY,
          webhook: {
            target: loadWebhookConfig(kubeconfig(`https://127.0.0.1:${port}`)),
            initialBackoffMs: 5,
            mode: 'blocking',
            batch: DEFAULT_WEBHOOK_BATCH,
            truncate: DEFAULT_TRUNCATE,
            version: 'audit.platform/v1',
          },
        };
      });
      try {
        const r = await server.request('POST', '/api/v1/namespaces/default/configmaps', { body: cm('lost') });
        expect(r.status).toBe(201);
        expect(server.errors).toEqual(
          expect.arrayContaining([
            expect.objectContaining({ msg: 'Unable to send audit events to the webhook', attempts: 5 }),
            expect.objectContaining({ msg: 'Audit events could not be stored', backend: 'webhook' }),
          ]),
        );
        expect((await server.request('GET', '/api/v1/namespaces/default/configmaps/lost')).status).toBe(200);
      } finally {
        await server.stop();
      }
    });

    it('rejects unusable webhook configuration files, naming the field', () => {
      const dir = mkdtempSync(join(tmpdir(), 'audit-hook-bad-'));
      const file = join(dir, 'bad.kubeconfig');
      writeFileSync(file, 'clusters:\n  - name: a\n    cluster: {}\n');
      expect(() => loadWebhookConfig(file)).toThrow(
        `--audit-webhook-config-file: ${file}: cluster.server: Required value`,
      );
      writeFileSync(file, 'clusters:\n  - name: a\n    cluster: { server: "ftp://x" }\n');
      expect(() => loadWebhookConfig(file)).toThrow('unsupported scheme "ftp:"');
      expect(() => loadWebhookConfig(join(dir, 'missing'))).toThrow('cannot be read');
    });
  });
});
