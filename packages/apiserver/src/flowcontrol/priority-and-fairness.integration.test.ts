/**
 * API Priority and Fairness on a real API server: classification headers, the bootstrap configuration kept by the
 * server, Dangling conditions, validation, queuing and 429s of a full level, the exempt level, metrics and dumps.
 * A request holds its seat while its body is uploaded: a POST whose body the test withholds occupies a seat for as
 * long as the test wants, without timing guesses.
 */
import { request as httpsRequest } from 'node:https';
import { type ClientRequest, type IncomingMessage } from 'node:http';

import { requestAuthenticator } from '../auth/authenticator';
import { startTestServer, type TestResponse, type TestServer } from '../testing/test-server';

const FC = '/apis/flowcontrol.apiserver.platform/v1beta1';
const FS_HEADER = 'x-kubernetes-pf-flowschema-uid';
const PL_HEADER = 'x-kubernetes-pf-prioritylevel-uid';

/** The test authenticator: `x-test-user` and `x-test-groups` (comma-separated) say who is asking. */
const headerAuthenticator = requestAuthenticator(
  [
    {
      authenticate: (req) => {
        const name = req.headers['x-test-user'];
        if (typeof name !== 'string') return Promise.resolve(undefined);
        const groups = String(req.headers['x-test-groups'] ?? '')
          .split(',')
          .filter(Boolean);
        return Promise.resolve({ user: { name, groups } });
      },
    },
  ],
  true,
);

const as = (user: string, ...groups: string[]): Record<string, string> => ({
  'x-test-user': user,
  'x-test-groups': groups.join(','),
});
const ADMIN = as('admin', 'system:masters');

async function eventually<T>(what: string, f: () => Promise<T | undefined>, timeoutMs = 45_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A POST whose body is withheld until `release()`: it holds a seat of its level meanwhile. */
function heldPost(s: TestServer, headers: Record<string, string>): { release(): Promise<number>; req: ClientRequest } {
  const body = JSON.stringify({
    apiVersion: 'authorization.platform/v1',
    kind: 'SelfSubjectAccessReview',
    spec: { resourceAttributes: { verb: 'get', resource: 'pods' } },
  });
  let status: Promise<number> = new Promise(() => {});
  const req = httpsRequest(`${s.url}/apis/authorization.platform/v1/selfsubjectaccessreviews`, {
    method: 'POST',
    ca: s.ca,
    headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
  });
  status = new Promise((resolve, reject) => {
    req.on('response', (res: IncomingMessage) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
  });
  req.flushHeaders();
  return {
    req,
    release: () => {
      req.end(body);
      return status;
    },
  };
}

/** The row of a priority level in `dump_priority_levels`, as cells. */
async function levelRow(s: TestServer, level: string): Promise<string[] | undefined> {
  const r = await s.request('GET', '/debug/api_priority_and_fairness/dump_priority_levels', { headers: ADMIN });
  const row = r.text.split('\n').find((l) => l.startsWith(`${level},`));
  return row?.split(',').map((c) => c.trim());
}

describe('API Priority and Fairness', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer((c) => {
      c.priorityAndFairness = true;
      c.security = { authenticator: headerAuthenticator };
    });
  }, 90_000);
  afterAll(() => s?.stop());

  const get = (path: string, headers: Record<string, string> = ADMIN): Promise<TestResponse> =>
    s.request('GET', path, { headers });

  it('keeps the bootstrap configuration of 1.21: mandatory and suggested objects, marked for autoupdate', async () => {
    const fs = await eventually('the suggested flow schemas', async () => {
      const r = await get(`${FC}/flowschemas`);
      return r.json?.items?.length >= 12
        ? (r.json.items as { metadata: { name: string; annotations: object } }[])
        : undefined;
    });
    expect(fs.map((f) => f.metadata.name).sort()).toEqual(
      [
        'catch-all',
        'exempt',
        'global-default',
        'platform-controller-manager',
        'platform-scheduler',
        'probes',
        'service-accounts',
        'system-leader-election',
        'system-node-high',
        'system-nodes',
        'system-service-accounts',
        'workload-leader-election',
      ].sort(),
    );
    for (const f of fs) expect(f.metadata.annotations).toEqual({ 'apf.platform.io/autoupdate-spec': 'true' });
    const pls = (await get(`${FC}/prioritylevelconfigurations`)).json.items as { metadata: { name: string } }[];
    expect(pls.map((p) => p.metadata.name).sort()).toEqual(
      [
        'catch-all',
        'exempt',
        'global-default',
        'leader-election',
        'node-high',
        'system',
        'workload-high',
        'workload-low',
      ].sort(),
    );
    // Nothing rewrites them in a loop: once their conditions are written, their versions stay put.
    const versions = async (): Promise<string> =>
      JSON.stringify(
        await Promise.all(
          ['flowschemas', 'prioritylevelconfigurations'].map(async (r) =>
            ((await get(`${FC}/${r}`)).json.items as { metadata: { resourceVersion: string } }[]).map(
              (i) => i.metadata.resourceVersion,
            ),
          ),
        ),
      );
    await eventually('a stable configuration', async () => {
      const before = await versions();
      await new Promise((r) => setTimeout(r, 1500));
      return before === (await versions()) ? true : undefined;
    });
    // kubectl's columns.
    const table = await s.request('GET', `${FC}/prioritylevelconfigurations/catch-all`, {
      headers: { ...ADMIN, accept: 'application/json;as=Table;g=meta.platform;v=v1beta1' },
    });
    expect(table.json.columnDefinitions.map((c: { name: string }) => c.name)).toEqual([
      'Name',
      'Type',
      'AssuredConcurrencyShares',
      'Queues',
      'HandSize',
      'QueueLengthLimit',
      'Age',
    ]);
    expect(table.json.rows[0].cells.slice(0, 6)).toEqual(['catch-all', 'Limited', 5, '<none>', '<none>', '<none>']);
  });

  it('classifies every request and names the flow schema and priority level in the response headers', async () => {
    const uid = async (resource: string, name: string): Promise<string> =>
      (await get(`${FC}/${resource}/${name}`)).json.metadata.uid as string;
    const [globalFs, globalPl, exemptFs, exemptPl] = await Promise.all([
      uid('flowschemas', 'global-default'),
      uid('prioritylevelconfigurations', 'global-default'),
      uid('flowschemas', 'exempt'),
      uid('prioritylevelconfigurations', 'exempt'),
    ]);
    // The headers carry the uids once the server has read its configuration.
    await eventually('classification by the stored objects', async () => {
      const r = await get('/api/v1/namespaces', as('alice', 'dev'));
      return r.headers[FS_HEADER] === globalFs ? r : undefined;
    });
    const alice = await get('/api/v1/namespaces', as('alice', 'dev'));
    expect(alice.status).toBe(200);
    expect([alice.headers[FS_HEADER], alice.headers[PL_HEADER]]).toEqual([globalFs, globalPl]);
    const admin = await get('/api/v1/namespaces');
    expect([admin.headers[FS_HEADER], admin.headers[PL_HEADER]]).toEqual([exemptFs, exemptPl]);
    const anonymous = await s.request('GET', '/api/v1/namespaces');
    expect(anonymous.headers[FS_HEADER]).toBe(globalFs);
    // A service account of the system namespace is workload-high, ByNamespace.
    const sa = await get(
      '/api/v1/namespaces/default/configmaps',
      as('system:serviceaccount:system:job-controller', 'system:serviceaccounts'),
    );
    expect(sa.headers[FS_HEADER]).toBe(await uid('flowschemas', 'system-service-accounts'));
  });

  it('validates with the messages of 1.21', async () => {
    const bad = await s.request('POST', `${FC}/flowschemas`, {
      headers: ADMIN,
      body: {
        apiVersion: 'flowcontrol.apiserver.platform/v1beta1',
        kind: 'FlowSchema',
        metadata: { name: 'bad' },
        spec: {
          priorityLevelConfiguration: { name: '' },
          matchingPrecedence: 20000,
          distinguisherMethod: { type: 'ByColour' },
          rules: [{ subjects: [], resourceRules: [{ verbs: ['get', '*'], apiGroups: [''], resources: ['pods'] }] }],
        },
      },
    });
    expect(bad.status).toBe(422);
    expect(bad.json.details.causes.map((c: { field: string; message: string }) => `${c.field}: ${c.message}`)).toEqual([
      'spec.matchingPrecedence: Invalid value: 20000: must not be greater than 10000',
      'spec.distinguisherMethod.type: Unsupported value: "ByColour": supported values: "ByNamespace", "ByUser"',
      'spec.priorityLevelConfiguration.name: Required value: must reference a priority level',
      'spec.rules[0].subjects: Required value: subjects must contain at least one value',
      `spec.rules[0].resourceRules[0].verbs: Invalid value: []string{"get", "*"}: if '*' is present, must not specify other verbs`,
      'spec.rules[0].resourceRules[0].namespaces: Required value: resource rules that are not cluster scoped must supply at least one namespace',
    ]);
    const pl = await s.request('POST', `${FC}/prioritylevelconfigurations`, {
      headers: ADMIN,
      body: {
        apiVersion: 'flowcontrol.apiserver.platform/v1beta1',
        kind: 'PriorityLevelConfiguration',
        metadata: { name: 'bad' },
        spec: { type: 'Limited', limited: { limitResponse: { type: 'Queue', queuing: { queues: 4, handSize: 8 } } } },
      },
    });
    expect(pl.status).toBe(422);
    expect(pl.json.message).toContain(
      'spec.limited.limitResponse.queuing.handSize: Invalid value: 8: should not be greater than queues (4)',
    );
  });

  it('marks a flow schema whose priority level is missing Dangling, and not once it exists', async () => {
    const fs = {
      apiVersion: 'flowcontrol.apiserver.platform/v1beta1',
      kind: 'FlowSchema',
      metadata: { name: 'dangling-test' },
      spec: {
        priorityLevelConfiguration: { name: 'not-yet' },
        matchingPrecedence: 5000,
        rules: [
          {
            subjects: [{ kind: 'User', user: { name: 'nobody' } }],
            nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
          },
        ],
      },
    };
    expect((await s.request('POST', `${FC}/flowschemas`, { headers: ADMIN, body: fs })).status).toBe(201);
    const condition = (status: string) =>
      eventually(`Dangling ${status}`, async () => {
        const r = await get(`${FC}/flowschemas/dangling-test`);
        const c = (r.json.status?.conditions ?? []).find((x: { type: string }) => x.type === 'Dangling');
        return c?.status === status ? c : undefined;
      });
    expect(await condition('True')).toMatchObject({ reason: 'NotFound' });
    const table = await s.request('GET', `${FC}/flowschemas/dangling-test`, {
      headers: { ...ADMIN, accept: 'application/json;as=Table;g=meta.platform;v=v1beta1' },
    });
    expect(table.json.rows[0].cells).toEqual(['dangling-test', 'not-yet', 5000, '<none>', expect.any(String), 'True']);
    const pl = {
      apiVersion: 'flowcontrol.apiserver.platform/v1beta1',
      kind: 'PriorityLevelConfiguration',
      metadata: { name: 'not-yet' },
      spec: { type: 'Limited', limited: { limitResponse: { type: 'Reject' } } },
    };
    expect((await s.request('POST', `${FC}/prioritylevelconfigurations`, { headers: ADMIN, body: pl })).status).toBe(
      201,
    );
    expect(await condition('False')).toMatchObject({ reason: 'Found' });
  });

  it('restores the mandatory objects after they are deleted or changed', async () => {
    const old = (await get(`${FC}/flowschemas/catch-all`)).json.metadata.uid as string;
    expect((await s.request('DELETE', `${FC}/flowschemas/catch-all`, { headers: ADMIN })).status).toBe(200);
    expect((await s.request('DELETE', `${FC}/prioritylevelconfigurations/exempt`, { headers: ADMIN })).status).toBe(
      200,
    );
    const back = await eventually('catch-all back', async () => {
      const r = await get(`${FC}/flowschemas/catch-all`);
      return r.status === 200 && r.json.metadata.uid !== old ? r.json : undefined;
    });
    expect(back.spec).toMatchObject({ priorityLevelConfiguration: { name: 'catch-all' }, matchingPrecedence: 10000 });
    await eventually('exempt back', async () =>
      (await get(`${FC}/prioritylevelconfigurations/exempt`)).status === 200 ? true : undefined,
    );
    // A changed mandatory spec is put back too.
    const cur = (await get(`${FC}/prioritylevelconfigurations/catch-all`)).json;
    cur.spec.limited.assuredConcurrencyShares = 50;
    expect(
      (await s.request('PUT', `${FC}/prioritylevelconfigurations/catch-all`, { headers: ADMIN, body: cur })).status,
    ).toBe(200);
    await eventually('catch-all shares back to 5', async () => {
      const r = await get(`${FC}/prioritylevelconfigurations/catch-all`);
      return r.json.spec.limited.assuredConcurrencyShares === 5 ? true : undefined;
    });
  });

  describe('a full level', () => {
    const held: { release(): Promise<number>; req: ClientRequest }[] = [];
    afterAll(() => {
      for (const h of held) h.req.destroy();
    });

    it('queues, then answers 429 with Retry-After; the exempt level is never queued; dumps and metrics show it', async () => {
      // A level of one seat and one queue of one request, for one user.
      const pl = {
        apiVersion: 'flowcontrol.apiserver.platform/v1beta1',
        kind: 'PriorityLevelConfiguration',
        metadata: { name: 'tiny' },
        spec: {
          type: 'Limited',
          limited: {
            assuredConcurrencyShares: 1,
            limitResponse: { type: 'Queue', queuing: { queues: 1, handSize: 1, queueLengthLimit: 1 } },
          },
        },
      };
      const fs = {
        apiVersion: 'flowcontrol.apiserver.platform/v1beta1',
        kind: 'FlowSchema',
        metadata: { name: 'tiny' },
        spec: {
          priorityLevelConfiguration: { name: 'tiny' },
          matchingPrecedence: 100,
          distinguisherMethod: { type: 'ByUser' },
          rules: [
            {
              subjects: [{ kind: 'User', user: { name: 'flooder' } }],
              resourceRules: [
                { verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] },
              ],
            },
          ],
        },
      };
      expect((await s.request('POST', `${FC}/prioritylevelconfigurations`, { headers: ADMIN, body: pl })).status).toBe(
        201,
      );
      expect((await s.request('POST', `${FC}/flowschemas`, { headers: ADMIN, body: fs })).status).toBe(201);
      const tinyUid = (await get(`${FC}/flowschemas/tiny`)).json.metadata.uid as string;
      await eventually('the tiny flow schema in use', async () => {
        const r = await get('/api/v1/namespaces', as('flooder'));
        return r.headers[FS_HEADER] === tinyUid ? true : undefined;
      });
      const metrics = (await get('/metrics')).text;
      const limit = Number(
        /apiserver_flowcontrol_request_concurrency_limit\{priority_level="tiny"\} (\d+)/.exec(metrics)?.[1],
      );
      expect(limit).toBeGreaterThanOrEqual(1);
      // Fill every seat with held requests, then one more waits in the queue.
      for (let i = 0; i < limit; i++) held.push(heldPost(s, as('flooder')));
      await eventually('the seats taken', async () =>
        (await levelRow(s, 'tiny'))?.[5] === String(limit) ? true : undefined,
      );
      const queued = heldPost(s, as('flooder'));
      held.push(queued);
      await eventually('one request waiting', async () =>
        (await levelRow(s, 'tiny'))?.[4] === '1' ? true : undefined,
      );
      const requests = await get('/debug/api_priority_and_fairness/dump_requests?includeRequestDetails=1');
      expect(requests.text.split('\n')[0]).toMatch(/^PriorityLevelName, +FlowSchemaName, +QueueIndex/);
      expect(requests.text).toMatch(
        /tiny, +tiny, +0, +0, +flooder, .*flooder, +create, +\/apis\/authorization.platform\/v1\/selfsubjectaccessreviews/,
      );
      const queues = await get('/debug/api_priority_and_fairness/dump_queues');
      expect(queues.text).toMatch(/tiny, +0, +1, +\d+,/);
      // The queue is full: the next one is turned away at once.
      const rejected = await get('/api/v1/namespaces', as('flooder'));
      expect(rejected.status).toBe(429);
      expect(rejected.headers['retry-after']).toBe('1');
      expect(rejected.json).toMatchObject({ kind: 'Status', reason: 'TooManyRequests', code: 429 });
      expect(rejected.headers[FS_HEADER]).toBe(tinyUid);
      // The same user in system:masters is exempt: served at once, never queued.
      const exemptPl = (await get(`${FC}/prioritylevelconfigurations/exempt`)).json.metadata.uid as string;
      for (let i = 0; i < 5; i++) {
        const r = await get('/api/v1/namespaces', as('flooder', 'system:masters'));
        expect([r.status, r.headers[PL_HEADER]]).toEqual([200, exemptPl]);
      }
      // Another user of another level is not affected.
      expect((await get('/api/v1/namespaces', as('bob'))).status).toBe(200);
      // Seats freed: the queued request runs.
      expect(await held[0]!.release()).toBe(201);
      expect(await queued.release()).toBe(201);
      for (const h of held.slice(1, limit)) expect(await h.release()).toBe(201);
      const after = (await get('/metrics')).text;
      expect(after).toMatch(
        /apiserver_flowcontrol_rejected_requests_total\{flow_schema="tiny",priority_level="tiny",reason="queue-full"\} 1/,
      );
      expect(after).toMatch(
        /apiserver_flowcontrol_dispatched_requests_total\{flow_schema="tiny",priority_level="tiny"\} \d+/,
      );
      expect(after).toMatch(
        /apiserver_flowcontrol_request_wait_duration_seconds_count\{flow_schema="tiny",priority_level="tiny",execute="true"\} \d+/,
      );
      expect(after).toMatch(
        /apiserver_flowcontrol_current_executing_requests\{flow_schema="exempt",priority_level="exempt"\}|apiserver_flowcontrol_dispatched_requests_total\{flow_schema="exempt",priority_level="exempt"\}/,
      );
    });
  });

  it('lets watches through without holding a seat', async () => {
    const r = await eventually('a watch answered', async () => {
      const res = await new Promise<IncomingMessage>((resolve, reject) => {
        const req = httpsRequest(`${s.url}/api/v1/namespaces?watch=true&timeoutSeconds=1`, {
          ca: s.ca,
          headers: as('flooder'),
        });
        req.on('response', resolve);
        req.on('error', reject);
        req.end();
      });
      res.resume();
      await new Promise((resolve) => res.on('end', resolve));
      return res;
    });
    expect(r.statusCode).toBe(200);
    expect(r.headers[FS_HEADER]).toBeUndefined();
  });
});
