/**
 * Document 1, "Errors" (and the error codes the rest of the document implies): every failure answers a Status body
 * with the code, reason and a message saying what went wrong. Runs on both stores.
 *
 * Not here: 401 and 403 (the security issue brings authentication and authorization), 500 (a bug, not a behaviour).
 */
import { request as httpsRequest } from 'node:https';

import { type TestResponse, type TestServer } from '../../testing/test-server';
import { configMap, freshNamespace, mustCreate, STORES, useServer } from './harness';

/** The body limit of these servers (small, so that the 413 case sends little). */
const MAX_BODY = 64 * 1024;
/** The request time-out of these servers (shorter than the 3 s a too-new resource version waits). */
const REQUEST_TIMEOUT_MS = 2500;

/** Asserts a Status body with the code and reason, and returns it. */
function expectStatus(r: TestResponse, code: number, reason: string) {
  expect(r.headers['content-type']).toBe('application/json');
  expect(r.json).toMatchObject({ apiVersion: 'v1', kind: 'Status', status: 'Failure', code, reason });
  expect(r.status).toBe(code);
  expect(typeof r.json.message).toBe('string');
  return r.json;
}

/** Starts a POST whose body never finishes, so that it stays in flight until `finish()`. */
function hangingPost(t: TestServer, path: string): { finish(): Promise<number> } {
  const body = Buffer.from(JSON.stringify(configMap('hanging')));
  const req = httpsRequest(`${t.url}${path}`, {
    method: 'POST',
    ca: t.ca,
    headers: { 'content-type': 'application/json', 'content-length': String(body.length) },
  });
  const status = new Promise<number>((resolve, reject) => {
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
  });
  req.write(body.subarray(0, 5));
  return {
    finish: () => {
      req.end(body.subarray(5));
      return status;
    },
  };
}

describe.each(STORES)('errors on %s', (store) => {
  const server = useServer(store, (c) => {
    c.limits.maxRequestBodyBytes = MAX_BODY;
    c.limits.maxMutatingRequestsInFlight = 1;
    c.limits.requestTimeoutMs = REQUEST_TIMEOUT_MS;
  });
  let cms: string;
  beforeAll(async () => {
    cms = `/api/v1/namespaces/${await freshNamespace(server(), 'errors')}/configmaps`;
  });

  describe('400 Bad Request', () => {
    it.each([
      ['malformed JSON', '{"kind":', 'application/json', /json|unexpected|parse/i],
      ['malformed YAML', 'kind: [', 'application/yaml', /yaml/i],
      ['a body of the wrong kind', JSON.stringify({ ...configMap('x'), kind: 'Secret' }), 'application/json', /kind/],
      ['a field of the wrong type', JSON.stringify({ ...configMap('x'), data: 'nope' }), 'application/json', /data/],
      ['Protobuf without the k8s envelope', 'not protobuf', 'application/vnd.platform.protobuf', /./],
    ])('for %s', async (_what, body, contentType, message) => {
      const r = await server().request('POST', cms, { body, headers: { 'content-type': contentType } });
      expect(expectStatus(r, 400, 'BadRequest').message).toMatch(message);
    });

    it('for a bad query parameter, naming it', async () => {
      for (const [q, name] of [
        ['limit=x', 'limit'],
        ['timeoutSeconds=soon', 'timeoutSeconds'],
        ['labelSelector=a%20in%20(', 'labelSelector'],
        ['fieldSelector=nope%3Dx', 'nope'],
      ]) {
        const r = await server().request('GET', `${cms}?${q}`);
        expect(expectStatus(r, 400, 'BadRequest').message).toContain(name);
      }
    });

    it('for a body whose namespace differs from the path', async () => {
      const r = await server().request('POST', cms, {
        body: { ...configMap('x'), metadata: { name: 'x', namespace: 'elsewhere' } },
      });
      expect(expectStatus(r, 400, 'BadRequest').message).toMatch(/namespace/);
    });
  });

  describe('404 Not Found', () => {
    it('for an object that does not exist, with its details', async () => {
      const r = await server().request('GET', `${cms}/missing`);
      const s = expectStatus(r, 404, 'NotFound');
      expect(s.message).toBe('configmaps "missing" not found');
      expect(s.details).toMatchObject({ name: 'missing', kind: 'configmaps' });
    });

    it('for deletes, updates and patches of a missing object', async () => {
      const t = server();
      expectStatus(await t.request('DELETE', `${cms}/missing`), 404, 'NotFound');
      expectStatus(await t.request('PUT', `${cms}/missing`, { body: configMap('missing') }), 404, 'NotFound');
      expectStatus(
        await t.request('PATCH', `${cms}/missing`, {
          body: { data: { a: '2' } },
          headers: { 'content-type': 'application/merge-patch+json' },
        }),
        404,
        'NotFound',
      );
    });

    it.each([['/api/v2'], ['/apis/nope'], ['/apis/nope/v1/things'], ['/api/v1/nopes'], ['/apis/apps/v9/deployments']])(
      'for the unknown path %s',
      async (path) => {
        expectStatus(await server().request('GET', path), 404, 'NotFound');
      },
    );

    it('for an unknown subresource', async () => {
      await mustCreate(server(), cms, configMap('has-no-status'));
      expectStatus(await server().request('GET', `${cms}/has-no-status/status`), 404, 'NotFound');
    });
  });

  describe('405 Method Not Allowed', () => {
    it.each([
      ['PUT', 'a collection', () => cms],
      ['POST', 'a named object', () => `${cms}/x`],
      ['GET', 'a create-only virtual resource', () => '/apis/authorization.platform/v1/subjectaccessreviews'],
      ['DELETE', 'a create-only virtual resource', () => '/apis/authentication.platform/v1/tokenreviews/x'],
    ])('for %s on %s', async (method, _what, path) => {
      const r = await server().request(method, path(), { body: configMap('x') });
      expectStatus(r, 405, 'MethodNotAllowed');
    });
  });

  describe('406 Not Acceptable', () => {
    it.each([['text/html'], ['application/xml'], ['application/json;as=Table;g=meta.platform;v=v9']])(
      'for Accept: %s',
      async (accept) => {
        const r = await server().request('GET', cms, { headers: { accept } });
        expect(expectStatus(r, 406, 'NotAcceptable').message).toContain('only the following media types');
      },
    );
  });

  describe('409 Conflict', () => {
    it('AlreadyExists for a second create of one name', async () => {
      const t = server();
      await mustCreate(t, cms, configMap('twice'));
      const s = expectStatus(await t.request('POST', cms, { body: configMap('twice') }), 409, 'AlreadyExists');
      expect(s.message).toBe('configmaps "twice" already exists');
      expect(s.details).toMatchObject({ name: 'twice', kind: 'configmaps' });
    });

    it('Conflict for an update with a stale resourceVersion', async () => {
      const t = server();
      const first = await mustCreate(t, cms, configMap('stale'));
      expect((await t.request('PUT', `${cms}/stale`, { body: { ...first, data: { a: '2' } } })).status).toBe(200);
      const s = expectStatus(
        await t.request('PUT', `${cms}/stale`, { body: { ...first, data: { a: '3' } } }),
        409,
        'Conflict',
      );
      expect(s.message).toContain('the object has been modified; please apply your changes to the latest version');
    });

    it('Conflict for a delete whose preconditions do not hold', async () => {
      const t = server();
      await mustCreate(t, cms, configMap('precondition'));
      const r = await t.request('DELETE', `${cms}/precondition`, {
        body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'not-the-uid' } },
      });
      expect(expectStatus(r, 409, 'Conflict').message).toContain('Precondition failed');
    });
  });

  describe('413 Request Entity Too Large', () => {
    it('for a body over the limit', async () => {
      const r = await server().request('POST', cms, { body: configMap('big', { x: 'y'.repeat(2 * MAX_BODY) }) });
      expectStatus(r, 413, 'RequestEntityTooLarge');
    });
  });

  describe('415 Unsupported Media Type', () => {
    it.each([['text/plain'], ['application/x-www-form-urlencoded']])('for Content-Type: %s', async (contentType) => {
      const r = await server().request('POST', cms, { body: configMap('x'), headers: { 'content-type': contentType } });
      expectStatus(r, 415, 'UnsupportedMediaType');
    });

    it('for a patch type the endpoint does not take', async () => {
      await mustCreate(server(), cms, configMap('patch-type'));
      const r = await server().request('PATCH', `${cms}/patch-type`, {
        body: { data: {} },
        headers: { 'content-type': 'application/json' },
      });
      expectStatus(r, 415, 'UnsupportedMediaType');
    });
  });

  describe('422 Unprocessable Entity', () => {
    it('Invalid, with one cause per bad field', async () => {
      const r = await server().request('POST', cms, { body: configMap('Not_Valid', { 'bad key!': 'v' }) });
      const s = expectStatus(r, 422, 'Invalid');
      expect(s.message).toMatch(/^ConfigMap "Not_Valid" is invalid: /);
      expect(s.details).toMatchObject({ name: 'Not_Valid', kind: 'ConfigMap' });
      const causes = s.details.causes as { reason: string; field: string; message: string }[];
      expect(causes.map((c) => [c.reason, c.field])).toEqual(
        expect.arrayContaining([
          ['FieldValueInvalid', 'metadata.name'],
          ['FieldValueInvalid', 'data[bad key!]'],
        ]),
      );
    });

    it('Invalid for a missing name, and for dryRun values other than All', async () => {
      const t = server();
      const noName = await t.request('POST', cms, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: {} } });
      expect(expectStatus(noName, 422, 'Invalid').details.causes).toEqual(
        expect.arrayContaining([expect.objectContaining({ reason: 'FieldValueRequired', field: 'metadata.name' })]),
      );
      const dry = await t.request('POST', `${cms}?dryRun=Maybe`, { body: configMap('x') });
      expect(expectStatus(dry, 422, 'Invalid').message).toContain('Unsupported value: "Maybe"');
    });
  });

  describe('429 Too Many Requests', () => {
    it('beyond --max-mutating-requests-inflight, with Retry-After', async () => {
      const t = server();
      const first = hangingPost(t, cms);
      // The hanging POST counts once the server has its headers: probe with dry runs (they store nothing) until
      // one is turned away.
      let r = await t.request('POST', `${cms}?dryRun=All`, { body: configMap('over-the-limit') });
      for (let i = 0; i < 200 && r.status !== 429; i++) {
        await new Promise((resolve) => setTimeout(resolve, 25));
        r = await t.request('POST', `${cms}?dryRun=All`, { body: configMap('over-the-limit') });
      }
      expectStatus(r, 429, 'TooManyRequests');
      expect(r.headers['retry-after']).toBe('1');
      expect(r.json.details).toMatchObject({ retryAfterSeconds: 1 });
      // Reads have their own limit.
      expect((await t.request('GET', cms)).status).toBe(200);
      expect(await first.finish()).toBe(201);
      expect((await t.request('POST', cms, { body: configMap('under-the-limit') })).status).toBe(201);
    });
  });

  describe('504 Gateway Timeout', () => {
    it('Timeout when a request outlives --request-timeout', async () => {
      const r = await server().request('GET', `${cms}?resourceVersion=999999999`);
      expect(expectStatus(r, 504, 'Timeout').message).toContain('request did not complete within requested timeout');
    });
  });
});
