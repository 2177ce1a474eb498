/**
 * Bearer tokens in the WebSocket subprotocol against a real API server over HTTPS: a watch whose only credential is
 * the subprotocol entry receives its events (as the token's user, with the entry not echoed back), bad entries are
 * 401, and requests that are not WebSocket upgrades ignore the entry.
 */
import { type IncomingMessage } from 'node:http';

import { WebSocket } from 'ws';

import { startTestServer, type TestServer } from '../../testing/test-server';
import { type Attributes, type AuthorizationResult, type Authorizer } from '../authorizer';
import { Authentication } from './authentication';
import { parseTokenFile } from './token-file';

jest.setTimeout(60_000);

const TOKEN = 'tok-alice';
const PATH = '/api/v1/namespaces/default/configmaps';

/** Allows everything but anonymous access to config maps; remembers who each request on them was. */
class ConfigMapAuthorizer implements Authorizer {
  readonly users: string[] = [];
  async authorize(a: Attributes): Promise<AuthorizationResult> {
    if (a.resource !== 'configmaps') return { decision: 'allow', reason: '' };
    this.users.push(`${a.verb} ${a.user.name}`);
    return a.user.name === 'system:anonymous'
      ? { decision: 'deny', reason: 'no anonymous access' }
      : { decision: 'allow', reason: '' };
  }
}

const bearer = (token: string, prefix = 'base64url.bearer.authorization.platform.'): string =>
  prefix + Buffer.from(token).toString('base64url');

let s: TestServer;
const authz = new ConfigMapAuthorizer();

beforeAll(async () => {
  s = await startTestServer((c) => {
    c.authentication = new Authentication({
      anonymous: true,
      apiAudiences: [],
      tokenFile: parseTokenFile(`${TOKEN},alice,1,dev\n`, 'tokens'),
      bootstrapTokens: false,
    });
    c.security = { authorizer: authz };
  });
});

afterAll(async () => {
  await s?.stop();
});

beforeEach(() => {
  authz.users.length = 0;
});

/** An open watch (the subprotocol chosen and echoed, the events as they come) or the status it was refused with. */
type Opened =
  | {
      refused: undefined;
      protocol: string;
      echoed: string | undefined;
      events: { type: string; name: string }[];
      ws: WebSocket;
    }
  | { refused: number };

/** Opens a WebSocket watch of config maps offering `protocols`. */
async function openWatch(protocols: string[]): Promise<Opened> {
  const ws = new WebSocket(`${s.url.replace('https:', 'wss:')}${PATH}?watch=1`, protocols, { ca: s.ca });
  const events: { type: string; name: string }[] = [];
  ws.on('message', (data: Buffer) => {
    const e = JSON.parse(data.toString('utf8')) as { type: string; object: { metadata?: { name?: string } } };
    events.push({ type: e.type, name: e.object.metadata?.name ?? '' });
  });
  let echoed: string | undefined;
  ws.once('upgrade', (res: IncomingMessage) => (echoed = res.headers['sec-websocket-protocol']));
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ refused: undefined, protocol: ws.protocol, echoed, events, ws }));
    ws.once('unexpected-response', (_req, res: IncomingMessage) => {
      res.resume();
      resolve({ refused: res.statusCode ?? 0 });
    });
    ws.once('error', reject);
  });
}

async function waitFor(check: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 10_000; !check();) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

it.each([
  ['the platform spelling', bearer(TOKEN)],
  ['the Kubernetes spelling', bearer(TOKEN, 'base64url.bearer.authorization.k8s.io.')],
])('a watch authenticated only by a bearer subprotocol (%s) receives events', async (_what, entry) => {
  const w = await openWatch([entry, 'base64.channel.k8s.io']);
  if (w.refused !== undefined) throw new Error(`refused with ${w.refused}`);
  try {
    // The bearer entry is removed before the upgrade is answered: the other subprotocol is the one chosen.
    expect([w.protocol, w.echoed]).toEqual(['base64.channel.k8s.io', 'base64.channel.k8s.io']);
    const name = `ws-${Math.random().toString(36).slice(2, 8)}`;
    const created = await s.request('POST', PATH, {
      headers: { authorization: `Bearer ${TOKEN}` },
      body: { metadata: { name } },
    });
    expect(created.status).toBe(201);
    await waitFor(() => w.events.some((e) => e.name === name));
    expect(w.events.find((e) => e.name === name)?.type).toBe('ADDED');
    expect(authz.users).toContain('watch alice');
  } finally {
    w.ws.close();
  }
});

it('without the entry the watch is anonymous (and refused by the authorizer)', async () => {
  expect(await openWatch(['base64.channel.k8s.io'])).toEqual({ refused: 403 });
  expect(authz.users).toEqual(['watch system:anonymous']);
});

it.each([
  ['a token no method accepts', [bearer('tok-mallory'), 'base64.channel.k8s.io']],
  ['an empty token', ['base64url.bearer.authorization.platform.', 'base64.channel.k8s.io']],
  ['a token that is not base64url', ['base64url.bearer.authorization.platform.dG9rZ', 'base64.channel.k8s.io']],
  ['two bearer entries', [bearer(TOKEN), bearer('other'), 'base64.channel.k8s.io']],
  ['no other subprotocol', [bearer(TOKEN)]],
])('%s is 401, even with anonymous requests allowed', async (_what, protocols) => {
  expect(await openWatch(protocols)).toEqual({ refused: 401 });
  expect(authz.users).toEqual([]);
});

it('a request that is not a WebSocket upgrade ignores the entry', async () => {
  const header = { 'sec-websocket-protocol': `${bearer(TOKEN)}, base64.channel.k8s.io` };
  expect((await s.request('GET', PATH, { headers: header })).status).toBe(403);
  expect(authz.users).toEqual(['list system:anonymous']);
  // The same token in the Authorization header is a valid credential.
  expect((await s.request('GET', PATH, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
});
