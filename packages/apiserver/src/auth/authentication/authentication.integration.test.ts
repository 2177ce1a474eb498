/**
 * Every authentication method over real HTTPS against a real API server: a matrix of valid, expired, wrongly
 * signed, wrong-audience and malformed credentials per method; front-proxy headers with and without the proxy's
 * certificate; the TokenRequest subresource and the issuer discovery documents; and a fuzz run of malformed
 * credentials while valid requests keep being served.
 */
import { createPublicKey, generateKeyPairSync, type KeyObject, X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import { Agent, createServer as createHttpsServer, request as httpsRequest, type Server } from 'node:https';
import { type AddressInfo } from 'node:net';

import { type ApiServerConfig } from '../../server/api-server';
import { startTestServer, type TestServer } from '../../testing/test-server';
import { type Attributes, type Authorizer } from '../authorizer';
import { Authentication, type AuthenticationConfig } from './authentication';
import { keyFromJwk, signJwt } from './jwt';
import { parseTokenFile } from './token-file';
import { signLegacyToken } from './service-account';
import { testCA, type TestCert } from './testing/pki';

jest.setTimeout(120_000);

const ISSUER = 'https://issuer.example';
const ADMIN = 'admin-token';

interface Reply {
  status: number;
  json: { kind?: string; code?: number; reason?: string; message?: string; [k: string]: unknown };
}

/** Records who each `/whoami/<id>` request was, and allows everything. */
class RecordingAuthorizer implements Authorizer {
  readonly seen = new Map<string, Attributes['user']>();
  async authorize(a: Attributes): Promise<{ decision: 'allow'; reason: string }> {
    if (a.path.startsWith('/whoami/')) this.seen.set(a.path, a.user);
    return { decision: 'allow', reason: '' };
  }
}

let seq = 0;
/** Keeps connections (one per client certificate) so the fuzz run does not spend its time in TLS handshakes. */
const agent = new Agent({ keepAlive: true, maxSockets: 64 });

function call(
  ts: TestServer,
  method: string,
  path: string,
  o: { token?: string; cert?: TestCert; headers?: Record<string, string>; body?: unknown } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const payload = o.body === undefined ? undefined : Buffer.from(JSON.stringify(o.body));
    const req = httpsRequest(
      `${ts.url}${path}`,
      {
        method,
        ca: ts.ca,
        agent,
        ...(o.cert ? { cert: o.cert.certPem, key: o.cert.keyPem } : {}),
        headers: {
          ...(o.token !== undefined ? { authorization: `Bearer ${o.token}` } : {}),
          ...(payload ? { 'content-type': 'application/json' } : {}),
          ...o.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          let json: Reply['json'] = {};
          try {
            json = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Reply['json'];
          } catch {
            json = {};
          }
          resolve({ status: res.statusCode ?? 0, json });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Who the server took the caller for; undefined when it answered 401 (then the 401 Status is checked). */
async function whoami(
  ts: TestServer,
  authz: RecordingAuthorizer,
  o: Parameters<typeof call>[3] = {},
): Promise<Attributes['user'] | undefined> {
  const path = `/whoami/${++seq}`;
  const r = await call(ts, 'GET', path, o);
  if (r.status === 401) {
    expect(r.json).toMatchObject({ kind: 'Status', code: 401, reason: 'Unauthorized', message: 'Unauthorized' });
    return undefined;
  }
  expect(r.status).toBe(404);
  return authz.seen.get(path);
}

/** An HTTPS server on 127.0.0.1 with a certificate of `ca`. */
async function httpsServer(
  cert: TestCert,
  handler: (path: string, body: string) => { status: number; body: unknown },
): Promise<{ server: Server; url: string }> {
  const server = createHttpsServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = handler(req.url ?? '', Buffer.concat(chunks).toString('utf8'));
      res.writeHead(r.status, { 'content-type': 'application/json' });
      res.end(typeof r.body === 'string' ? r.body : JSON.stringify(r.body));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `https://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const now = (): number => Math.floor(Date.now() / 1000);

describe('authentication over HTTPS', () => {
  let ts: TestServer;
  let strict: TestServer;
  const authz = new RecordingAuthorizer();
  const strictAuthz = new RecordingAuthorizer();
  let clientCA: Awaited<ReturnType<typeof testCA>>;
  let alice: TestCert;
  let expiredCert: TestCert;
  let rogueCert: TestCert;
  let serverOnlyCert: TestCert;
  let proxy: TestCert;
  let wrongProxy: TestCert;
  let saKey: KeyObject;
  let otherKey: KeyObject;
  let oidcKey: KeyObject;
  let oidcServer: { server: Server; url: string };
  let webhookServer: { server: Server; url: string };
  let webhookCalls = 0;
  let config: AuthenticationConfig;
  const started: TestServer[] = [];

  beforeAll(async () => {
    clientCA = await testCA('client-ca');
    const rogueCA = await testCA('client-ca'); // same name, other key
    const proxyCA = await testCA('proxy-ca');
    const serverCA = await testCA('server-ca');
    alice = await clientCA.sign({ cn: 'alice', orgs: ['dev', 'ops'] });
    expiredCert = await clientCA.sign({
      cn: 'old',
      notBefore: new Date(Date.now() - 3 * 86400_000),
      notAfter: new Date(Date.now() - 86400_000),
    });
    rogueCert = await rogueCA.sign({ cn: 'mallory', orgs: ['system:masters'] });
    serverOnlyCert = await clientCA.sign({ cn: 'server-only', usage: 'server' });
    proxy = await proxyCA.sign({ cn: 'front-proxy' });
    wrongProxy = await proxyCA.sign({ cn: 'other-proxy' });
    saKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    otherKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    oidcKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const oidcCert = await serverCA.sign({ cn: '127.0.0.1', usage: 'server', ips: ['127.0.0.1'] });
    let oidcUrl = '';
    oidcServer = await httpsServer(oidcCert, (path) => {
      if (path === '/.well-known/openid-configuration')
        return { status: 200, body: { issuer: oidcUrl, jwks_uri: `${oidcUrl}/keys` } };
      if (path === '/keys')
        return {
          status: 200,
          body: { keys: [{ ...createPublicKey(oidcKey).export({ format: 'jwk' }), kid: 'k1', use: 'sig' }] },
        };
      return { status: 404, body: {} };
    });
    oidcUrl = oidcServer.url;
    webhookServer = await httpsServer(oidcCert, (_path, body) => {
      webhookCalls++;
      const review = JSON.parse(body) as { apiVersion: string; spec: { token: string } };
      if (review.spec.token === 'webhook-garbage') return { status: 200, body: 'this is not JSON {' };
      if (review.spec.token === 'webhook-500') return { status: 500, body: { message: 'broken' } };
      if (review.spec.token === 'webhook-wrong-kind') return { status: 200, body: { kind: 'Status' } };
      const ok = review.spec.token === 'webhook-good';
      return {
        status: 200,
        body: {
          apiVersion: review.apiVersion,
          kind: 'TokenReview',
          status: ok ? { authenticated: true, user: { username: 'wh-user', uid: 'w1', groups: ['wh'] } } : {},
        },
      };
    });
    config = {
      anonymous: true,
      apiAudiences: ['api'],
      tokenFile: parseTokenFile(`${ADMIN},admin,0,system:masters\ntok-alice,alice-t,uid-1,"g1,g2"\n`, 'tokens'),
      clientCA: [new X509Certificate(clientCA.certPem)],
      requestHeader: {
        roots: [new X509Certificate(proxyCA.certPem)],
        allowedNames: ['front-proxy'],
        usernameHeaders: ['X-Remote-User'],
        groupHeaders: ['X-Remote-Group'],
        extraHeaderPrefixes: ['X-Remote-Extra-'],
      },
      serviceAccounts: {
        issuers: [ISSUER],
        publicKeys: [createPublicKey(saKey)],
        signingKey: saKey,
        lookup: true,
        maxExpirationSeconds: 7200,
        extendExpiration: true,
      },
      bootstrapTokens: true,
      oidc: {
        issuerUrl: oidcUrl,
        clientId: 'platform',
        caPem: serverCA.certPem,
        usernameClaim: 'sub',
        usernamePrefix: '',
        groupsClaim: 'groups',
        groupsPrefix: 'oidc:',
        requiredClaims: new Map([['tenant', 'a']]),
        signingAlgs: ['RS256'],
      },
      webhook: {
        client: { server: `${webhookServer.url}/review`, tls: { ca: serverCA.certPem } },
        version: 'v1',
        cacheTtlMs: 120_000,
      },
    };
    const configure =
      (anonymous: boolean, authorizer: Authorizer) =>
      (c: ApiServerConfig): void => {
        const auth = new Authentication({ ...config, anonymous });
        c.authentication = auth;
        c.serving.clientCA = auth.clientCAPem()!;
        c.security = { authorizer };
      };
    // Each server is remembered as soon as it runs, so afterAll stops it even when this hook fails half-way.
    const start = async (anonymous: boolean, authorizer: Authorizer): Promise<TestServer> => {
      const s = await startTestServer({
        configure: configure(anonymous, authorizer),
        readyzHeaders: { authorization: `Bearer ${ADMIN}` },
      });
      started.push(s);
      return s;
    };
    [ts, strict] = await Promise.all([start(true, authz), start(false, strictAuthz)]);
    // Objects the service account and bootstrap token methods read.
    for (const s of [ts, strict]) {
      const admin = { token: ADMIN };
      expect(
        (await call(s, 'POST', '/api/v1/namespaces/default/serviceaccounts', { ...admin, body: sa('robot') })).status,
      ).toBe(201);
      expect(
        (await call(s, 'POST', '/api/v1/namespaces/default/serviceaccounts', { ...admin, body: sa('other') })).status,
      ).toBe(201);
      expect(
        (
          await call(s, 'POST', '/api/v1/namespaces/default/pods', {
            ...admin,
            body: pod('p1', 'robot'),
          })
        ).status,
      ).toBe(201);
      expect(
        (
          await call(s, 'POST', '/api/v1/namespaces/default/pods', {
            ...admin,
            body: pod('p2', 'other'),
          })
        ).status,
      ).toBe(201);
    }
  });

  afterAll(async () => {
    await Promise.all(started.map((s) => s.stop()));
    agent.destroy();
    oidcServer?.server.close();
    webhookServer?.server.close();
  });

  function sa(name: string): unknown {
    return { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } };
  }

  function pod(name: string, serviceAccountName: string): unknown {
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: { serviceAccountName, containers: [{ name: 'c', image: 'busybox' }] },
    };
  }

  async function requestToken(s: TestServer, name: string, spec: Record<string, unknown>): Promise<Reply> {
    return call(s, 'POST', `/api/v1/namespaces/default/serviceaccounts/${name}/token`, {
      token: ADMIN,
      body: { apiVersion: 'authentication.platform/v1', kind: 'TokenRequest', spec },
    });
  }

  describe('anonymous', () => {
    it('a request without credentials is system:anonymous when allowed, 401 otherwise', async () => {
      expect(await whoami(ts, authz)).toEqual({ name: 'system:anonymous', groups: ['system:unauthenticated'] });
      expect(await whoami(strict, strictAuthz)).toBeUndefined();
    });

    it('a non-bearer Authorization header is not a credential', async () => {
      const u = await whoami(ts, authz, { headers: { authorization: 'Basic YTpi' } });
      expect(u?.name).toBe('system:anonymous');
    });
  });

  describe('token file', () => {
    it('valid: the user, uid and groups of the file, plus system:authenticated', async () => {
      expect(await whoami(ts, authz, { token: 'tok-alice' })).toEqual({
        name: 'alice-t',
        uid: 'uid-1',
        groups: ['g1', 'g2', 'system:authenticated'],
      });
    });

    it('unknown and malformed tokens are 401 even with anonymous requests allowed', async () => {
      expect(await whoami(ts, authz, { token: 'tok-alicex' })).toBeUndefined();
      expect(await whoami(ts, authz, { token: 'tok-alice,extra' })).toBeUndefined();
      // As in Kubernetes, an empty token (`Bearer  x` splits into an empty token first) is no credential at all.
      expect((await whoami(ts, authz, { headers: { authorization: 'Bearer  tok-alice' } }))?.name).toBe(
        'system:anonymous',
      );
    });
  });

  describe('client certificates', () => {
    it('valid: CN is the user, O entries the groups', async () => {
      expect(await whoami(ts, authz, { cert: alice })).toEqual({
        name: 'alice',
        groups: ['dev', 'ops', 'system:authenticated'],
      });
    });

    it('expired certificate: 401', async () => {
      expect(await whoami(ts, authz, { cert: expiredCert })).toBeUndefined();
    });

    it('wrong signature (an authority of the same name, another key): 401', async () => {
      expect(await whoami(ts, authz, { cert: rogueCert })).toBeUndefined();
    });

    it('wrong usage (a server-only certificate): 401', async () => {
      expect(await whoami(ts, authz, { cert: serverOnlyCert })).toBeUndefined();
    });

    it('a valid certificate with a bearer token that is wrong is still that certificate user', async () => {
      const u = await whoami(ts, authz, { cert: alice, token: 'nonsense' });
      expect(u?.name).toBe('alice');
    });
  });

  describe('front proxy request headers', () => {
    const headers = {
      'X-Remote-User': 'bob',
      'X-Remote-Group': 'team-a',
      'X-Remote-Extra-Scopes': 'read',
      'X-Remote-Extra-Acme.com%2Fproject': 'p1',
    };

    it('with the proxy certificate the headers name the user', async () => {
      expect(await whoami(ts, authz, { cert: proxy, headers })).toEqual({
        name: 'bob',
        groups: ['team-a', 'system:authenticated'],
        extra: { scopes: ['read'], 'acme.com/project': ['p1'] },
      });
    });

    it('without the proxy certificate the headers are ignored', async () => {
      expect((await whoami(ts, authz, { headers }))?.name).toBe('system:anonymous');
      expect(await whoami(strict, strictAuthz, { headers })).toBeUndefined();
      // A client certificate of the client CA is its own user, whatever the headers say.
      expect((await whoami(ts, authz, { cert: alice, headers }))?.name).toBe('alice');
    });

    it('a proxy certificate whose name is not allowed: 401', async () => {
      expect(await whoami(ts, authz, { cert: wrongProxy, headers })).toBeUndefined();
    });

    it('the identity headers never reach the handler', async () => {
      // The authorizer sees the user, never the raw headers: a TokenRequest by the proxy-authenticated admin works
      // only because the headers were read and removed (checked by the user recorded above); here we check that a
      // bearer token with proxy headers but no certificate keeps the token user.
      const u = await whoami(ts, authz, { token: 'tok-alice', headers });
      expect(u?.name).toBe('alice-t');
    });
  });

  describe('service account tokens (TokenRequest)', () => {
    it('valid: a requested token is the service account, bound tokens carry the pod', async () => {
      const r = await requestToken(ts, 'robot', { audiences: ['api'], expirationSeconds: 3600 });
      expect(r.status).toBe(201);
      const status = r.json.status as { token: string; expirationTimestamp: string };
      expect(Date.parse(status.expirationTimestamp) - Date.now()).toBeGreaterThan(3500_000);
      const u = await whoami(ts, authz, { token: status.token });
      expect(u).toMatchObject({
        name: 'system:serviceaccount:default:robot',
        groups: ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated'],
      });
      const podUid = (
        (await call(ts, 'GET', '/api/v1/namespaces/default/pods/p1', { token: ADMIN })).json.metadata as { uid: string }
      ).uid;
      const b = await requestToken(ts, 'robot', {
        boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'p1', uid: podUid },
      });
      expect(b.status).toBe(201);
      expect(await whoami(ts, authz, { token: (b.json.status as { token: string }).token })).toMatchObject({
        extra: { 'authentication.platform/pod-name': ['p1'], 'authentication.platform/pod-uid': [podUid] },
      });
    });

    it('default audiences are the API audiences; the maximum expiration shortens long requests', async () => {
      const r = await requestToken(ts, 'robot', { expirationSeconds: 100_000 });
      expect(r.status).toBe(201);
      expect(r.json.spec).toMatchObject({ audiences: ['api'], expirationSeconds: 7200 });
      const exp = Date.parse((r.json.status as { expirationTimestamp: string }).expirationTimestamp);
      expect(exp - Date.now()).toBeLessThanOrEqual(7200_000);
    });

    it('expired: 401', async () => {
      const uid = (
        (await call(ts, 'GET', '/api/v1/namespaces/default/serviceaccounts/robot', { token: ADMIN })).json.metadata as {
          uid: string;
        }
      ).uid;
      const claims = {
        iss: ISSUER,
        aud: ['api'],
        sub: 'system:serviceaccount:default:robot',
        iat: now() - 7200,
        nbf: now() - 7200,
        exp: now() - 3600,
        'kubernetes.io': { namespace: 'default', serviceaccount: { name: 'robot', uid } },
      };
      // The same claims within their validity pass; expired (beyond the minute of leeway) they do not.
      expect(await whoami(ts, authz, { token: signJwt({ ...claims, exp: now() + 3600 }, saKey) })).toMatchObject({
        name: 'system:serviceaccount:default:robot',
      });
      expect(await whoami(ts, authz, { token: signJwt(claims, saKey) })).toBeUndefined();
      expect(await whoami(strict, strictAuthz, { token: signJwt(claims, saKey) })).toBeUndefined();
    });

    it('wrong signature, wrong audience, deleted service account, malformed: 401', async () => {
      const uid = (
        (await call(ts, 'GET', '/api/v1/namespaces/default/serviceaccounts/robot', { token: ADMIN })).json.metadata as {
          uid: string;
        }
      ).uid;
      const claims = {
        iss: ISSUER,
        aud: ['api'],
        sub: 'system:serviceaccount:default:robot',
        iat: now(),
        nbf: now(),
        exp: now() + 3600,
        'kubernetes.io': { namespace: 'default', serviceaccount: { name: 'robot', uid } },
      };
      expect(await whoami(ts, authz, { token: signJwt(claims, otherKey) })).toBeUndefined();
      const wrongAud = await requestToken(ts, 'robot', { audiences: ['someone-else'] });
      expect(wrongAud.status).toBe(201);
      expect(await whoami(ts, authz, { token: (wrongAud.json.status as { token: string }).token })).toBeUndefined();
      expect(
        await whoami(ts, authz, {
          token: signJwt(
            { ...claims, 'kubernetes.io': { namespace: 'default', serviceaccount: { name: 'robot', uid: 'stale' } } },
            saKey,
          ),
        }),
      ).toBeUndefined();
      expect(
        await whoami(ts, authz, { token: signJwt({ ...claims, sub: 'system:serviceaccount:default:admin' }, saKey) }),
      ).toBeUndefined();
      const good = signJwt(claims, saKey);
      const [h, p] = good.split('.');
      expect(await whoami(ts, authz, { token: `${h}.${p}.` })).toBeUndefined();
      expect(await whoami(ts, authz, { token: `${h}.${p}.AAAA` })).toBeUndefined();
      expect(await whoami(ts, authz, { token: `${h}.e30.${good.split('.')[2]}` })).toBeUndefined();
    });

    it('a token bound to a deleted pod stops working', async () => {
      const s = strict;
      const r = await requestToken(s, 'other', { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'p2' } });
      expect(r.status).toBe(201);
      const token = (r.json.status as { token: string }).token;
      expect((await whoami(s, strictAuthz, { token }))?.name).toBe('system:serviceaccount:default:other');
      expect(
        (await call(s, 'DELETE', '/api/v1/namespaces/default/pods/p2?gracePeriodSeconds=0', { token: ADMIN })).status,
      ).toBe(200);
      expect(await whoami(s, strictAuthz, { token })).toBeUndefined();
    });

    it('refuses bad TokenRequests with the statuses Kubernetes uses', async () => {
      expect((await requestToken(ts, 'robot', { expirationSeconds: 60 })).json).toMatchObject({
        code: 422,
        reason: 'Invalid',
      });
      expect((await requestToken(ts, 'nobody', {})).json).toMatchObject({ code: 404, reason: 'NotFound' });
      expect(
        (await requestToken(ts, 'robot', { boundObjectRef: { kind: 'ConfigMap', apiVersion: 'v1', name: 'x' } })).json,
      ).toMatchObject({ code: 400 });
      expect(
        (await requestToken(ts, 'other', { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'p1' } })).json,
      ).toMatchObject({ code: 400 });
      expect(
        (
          await requestToken(ts, 'robot', {
            boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'p1', uid: 'nope' },
          })
        ).json,
      ).toMatchObject({ code: 409, reason: 'Conflict' });
      expect(
        (await requestToken(ts, 'robot', { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'missing' } })).json,
      ).toMatchObject({ code: 404 });
    });

    it('legacy tokens: valid while their Secret holds them; a deleted service account or another secret value: 401', async () => {
      const s = strict;
      const uid = (
        (await call(s, 'GET', '/api/v1/namespaces/default/serviceaccounts/robot', { token: ADMIN })).json.metadata as {
          uid: string;
        }
      ).uid;
      const token = signLegacyToken(saKey, 'default', 'robot-token', { name: 'robot', uid });
      expect(await whoami(s, strictAuthz, { token })).toBeUndefined(); // no secret yet
      const secret = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: 'robot-token',
          annotations: { 'kubernetes.io/service-account.name': 'robot', 'kubernetes.io/service-account.uid': uid },
        },
        type: 'kubernetes.io/service-account-token',
        data: { token: Buffer.from(token).toString('base64') },
      };
      expect((await call(s, 'POST', '/api/v1/namespaces/default/secrets', { token: ADMIN, body: secret })).status).toBe(
        201,
      );
      expect(await whoami(s, strictAuthz, { token })).toMatchObject({
        name: 'system:serviceaccount:default:robot',
        uid,
      });
      const forged = signLegacyToken(otherKey, 'default', 'robot-token', { name: 'robot', uid });
      expect(await whoami(s, strictAuthz, { token: forged })).toBeUndefined();
      const other = signLegacyToken(saKey, 'default', 'robot-token', { name: 'robot', uid: 'another' });
      expect(await whoami(s, strictAuthz, { token: other })).toBeUndefined();
    });

    it('serves the issuer discovery documents, whose keys verify issued tokens', async () => {
      const d = await call(ts, 'GET', '/.well-known/openid-configuration');
      expect(d.status).toBe(200);
      expect(d.json).toMatchObject({
        issuer: ISSUER,
        jwks_uri: `${ISSUER}/openid/v1/jwks`,
        response_types_supported: ['id_token'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['ES256'],
      });
      const j = await call(ts, 'GET', '/openid/v1/jwks');
      const keys = j.json.keys as { kid: string }[];
      expect(keys).toHaveLength(1);
      const key = keyFromJwk(keys[0]);
      expect(key?.export({ type: 'spki', format: 'der' })).toEqual(
        createPublicKey(saKey).export({ type: 'spki', format: 'der' }),
      );
    });
  });

  describe('TokenReview', () => {
    async function review(token: string, audiences?: string[]): Promise<Record<string, unknown>> {
      const r = await call(ts, 'POST', '/apis/authentication.platform/v1/tokenreviews', {
        token: ADMIN,
        body: {
          apiVersion: 'authentication.platform/v1',
          kind: 'TokenReview',
          spec: { token, ...(audiences ? { audiences } : {}) },
        },
      });
      expect(r.status).toBe(201);
      return r.json.status as Record<string, unknown>;
    }

    it('answers with the same token methods as requests, for the audiences asked', async () => {
      expect(await review('tok-alice')).toEqual({
        authenticated: true,
        user: { username: 'alice-t', uid: 'uid-1', groups: ['g1', 'g2', 'system:authenticated'] },
        audiences: ['api'],
      });
      const t = await requestToken(ts, 'robot', { audiences: ['vault'] });
      const token = (t.json.status as { token: string }).token;
      expect(await review(token)).toMatchObject({ authenticated: false });
      expect(await review(token, ['vault'])).toMatchObject({
        authenticated: true,
        user: { username: 'system:serviceaccount:default:robot' },
        audiences: ['vault'],
      });
      const bad = await review('no-such-token');
      expect(bad.authenticated).toBe(false);
      expect(typeof bad.error).toBe('string');
    });
  });

  describe('OIDC', () => {
    const claims = (): Record<string, unknown> => ({
      iss: oidcServer.url,
      aud: 'platform',
      sub: 'u-1',
      groups: ['admins', 'devs'],
      tenant: 'a',
      iat: now(),
      exp: now() + 600,
    });
    const sign = (c: Record<string, unknown>, key: KeyObject = oidcKey, alg?: 'RS256' | 'PS256'): string =>
      signJwt(c, key, { kid: 'k1', ...(alg ? { alg } : {}) });

    async function ready(): Promise<void> {
      for (let i = 0; i < 100; i++) {
        if (await whoami(strict, strictAuthz, { token: sign(claims()) })) return;
        await new Promise((r) => setTimeout(r, 50));
      }
    }

    it('valid: the prefixed subject and groups', async () => {
      await ready();
      expect(await whoami(ts, authz, { token: sign(claims()) })).toEqual({
        name: `${oidcServer.url}#u-1`,
        groups: ['oidc:admins', 'oidc:devs', 'system:authenticated'],
      });
    });

    it('expired, wrong signature, wrong audience, disallowed algorithm, missing required claim, malformed: 401', async () => {
      await ready();
      const rsaOther = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
      const bad = [
        sign({ ...claims(), exp: now() - 60 }),
        sign(claims(), rsaOther),
        sign({ ...claims(), aud: 'other' }),
        sign(claims(), oidcKey, 'PS256'),
        sign({ ...claims(), tenant: 'b' }),
        sign({ ...claims(), groups: 42 }),
        `${sign(claims()).slice(0, -4)}AAAA`,
      ];
      for (const token of bad) expect(await whoami(ts, authz, { token })).toBeUndefined();
    });
  });

  describe('webhook', () => {
    it('valid: the user the webhook answered, cached for the TTL; refused: 401', async () => {
      const before = webhookCalls;
      expect(await whoami(ts, authz, { token: 'webhook-good' })).toEqual({
        name: 'wh-user',
        uid: 'w1',
        groups: ['wh', 'system:authenticated'],
      });
      expect((await whoami(ts, authz, { token: 'webhook-good' }))?.name).toBe('wh-user');
      expect(webhookCalls - before).toBe(1);
      expect(await whoami(ts, authz, { token: 'webhook-bad' })).toBeUndefined();
      expect(await whoami(ts, authz, { token: 'webhook-bad' })).toBeUndefined();
      expect(webhookCalls - before).toBe(2);
    });

    it('a webhook answering garbage, an error or another kind: 401, not cached', async () => {
      const before = webhookCalls;
      for (const token of ['webhook-garbage', 'webhook-500', 'webhook-wrong-kind']) {
        expect(await whoami(ts, authz, { token })).toBeUndefined();
        expect(await whoami(ts, authz, { token })).toBeUndefined();
      }
      expect(webhookCalls - before).toBe(6);
      expect(ts.errors).toEqual([]);
    });
  });

  describe('bootstrap tokens', () => {
    function secret(id: string, data: Record<string, string>): unknown {
      return {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: `bootstrap-token-${id}` },
        type: 'bootstrap.platform/token',
        data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
      };
    }

    it('valid, expired, wrong secret, not for authentication, malformed', async () => {
      const put = async (id: string, data: Record<string, string>): Promise<void> => {
        const r = await call(ts, 'POST', '/api/v1/namespaces/system/secrets', { token: ADMIN, body: secret(id, data) });
        expect(r.status).toBe(201);
      };
      const base = { 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true' };
      await put('abcdef', { ...base, 'token-id': 'abcdef', 'auth-extra-groups': 'system:bootstrappers:nodes' });
      await put('expire', { ...base, 'token-id': 'expire', expiration: new Date(Date.now() - 1000).toISOString() });
      await put('nouse1', { 'token-id': 'nouse1', 'token-secret': '0123456789abcdef' });
      expect(await whoami(ts, authz, { token: 'abcdef.0123456789abcdef' })).toEqual({
        name: 'system:bootstrap:abcdef',
        groups: ['system:bootstrappers', 'system:bootstrappers:nodes', 'system:authenticated'],
      });
      for (const token of [
        'expire.0123456789abcdef',
        'abcdef.0123456789abcdee',
        'nouse1.0123456789abcdef',
        'zzzzzz.0123456789abcdef',
        'abcdef.0123456789ABCDEF',
      ])
        expect(await whoami(ts, authz, { token })).toBeUndefined();
    });
  });

  describe('fuzz', () => {
    it('thousands of malformed credentials are each a 401 Status, while valid requests go on being served', async () => {
      const rnd = (n: number): number => Math.floor(Math.random() * n);
      const chars = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~+/=:,;"{}[] ';
      const text = (n: number): string => Array.from({ length: n }, () => chars[rnd(chars.length)]).join('');
      const b64 = (v: unknown): string =>
        Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');
      const shapes: (() => Record<string, string>)[] = [
        () => ({ authorization: `Bearer ${text(1 + rnd(200)).replace(/ /g, '')}x` }),
        () => ({
          authorization: `Bearer ${b64({ alg: 'RS256' })}.${b64({ iss: ISSUER, exp: 'soon' })}.${text(20).replace(/[^A-Za-z0-9]/g, 'a')}`,
        }),
        () => ({
          authorization: `Bearer ${b64({ alg: 'none' })}.${b64({ iss: ISSUER, sub: 'system:serviceaccount:default:robot', aud: 'api' })}.`,
        }),
        () => ({
          authorization: `Bearer ${b64({ alg: 'ES256', kid: text(5) })}.${b64({ iss: 'kubernetes/serviceaccount' })}.${b64(text(64))}`,
        }),
        () => ({
          authorization: `Bearer ${b64({ alg: 'RS256', kid: 'k1' })}.${b64({ iss: oidcServer.url, aud: 'platform', sub: 'x', exp: now() + 60, tenant: 'a' })}.${b64(text(256))}`,
        }),
        () => ({ authorization: `Bearer ${b64(text(30))}.${b64([1, 2, 3])}.${b64('x')}` }),
        () => ({
          authorization: `Bearer ${text(6)
            .toLowerCase()
            .replace(/[^a-z0-9]/g, 'a')}.${text(16)
            .toLowerCase()
            .replace(/[^a-z0-9]/g, 'b')}`,
        }),
        () => ({ authorization: `Bearer ${'A'.repeat(4000 + rnd(4000))}` }),
        () => ({ authorization: `Bearer ${'a.'.repeat(50 + rnd(50))}` }),
        () => ({ 'x-remote-user': text(10), 'x-remote-group': 'system:masters', 'x-remote-extra-x': text(5) }),
        () => ({ 'x-remote-user': 'admin', authorization: `bearer ${text(12).replace(/ /g, '')}1` }),
      ];
      const N = 2000;
      let malformedDone = 0;
      const statuses = new Map<number, number>();
      let wrongBodies = 0;
      let validServed = 0;
      let validFailed = 0;
      let stop = false;
      const valid = (async () => {
        while (!stop) {
          const r = await call(strict, 'GET', '/api/v1/namespaces/default/serviceaccounts/robot', { token: ADMIN });
          if (r.status === 200) validServed++;
          else validFailed++;
        }
      })();
      let next = 0;
      const worker = async (): Promise<void> => {
        while (next < N) {
          next++;
          const headers = shapes[rnd(shapes.length)]!();
          const r = await call(strict, 'GET', '/api/v1/namespaces/default/pods', { headers });
          statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
          if (r.json.kind !== 'Status' || r.json.code !== 401 || r.json.message !== 'Unauthorized') wrongBodies++;
          malformedDone++;
        }
      };
      await Promise.all(Array.from({ length: 32 }, worker));
      stop = true;
      await valid;
      expect(malformedDone).toBe(N);
      expect([...statuses.keys()]).toEqual([401]);
      expect(wrongBodies).toBe(0);
      expect(validFailed).toBe(0);
      expect(validServed).toBeGreaterThan(0);
      expect(strict.errors).toEqual([]);
      expect((await call(strict, 'GET', '/readyz')).status).toBe(401);
      expect((await call(strict, 'GET', '/readyz', { token: ADMIN })).status).toBe(200);
    });
  });
});
