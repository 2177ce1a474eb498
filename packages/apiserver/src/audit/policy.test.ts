import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type Attributes } from '../auth/authorizer';
import { loadPolicyFile, parsePolicy, policyEvaluator, PolicyError } from './policy';

type Req = Omit<Partial<Attributes>, 'user'> & { user?: string; groups?: string[] };

function attrs(o: Req): Attributes {
  const { user, groups, ...rest } = o;
  return {
    user: { name: user ?? 'alice', groups: groups ?? ['system:authenticated'] },
    verb: 'get',
    resourceRequest: true,
    namespace: 'default',
    apiGroup: '',
    apiVersion: 'v1',
    resource: 'pods',
    subresource: '',
    name: 'web',
    path: '/api/v1/namespaces/default/pods/web',
    ...rest,
  };
}

const nonResource = (path: string, verb = 'get'): Req => ({
  resourceRequest: false,
  path,
  verb,
  namespace: '',
  apiVersion: '',
  resource: '',
  name: '',
});

describe('audit policy', () => {
  const { policy, warnings } = parsePolicy(`
apiVersion: audit.platform/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: None
    users: ["system:kube-proxy"]
    verbs: ["watch"]
  - level: None
    userGroups: ["system:nodes"]
    nonResourceURLs: ["/healthz*", "/version"]
  - level: RequestResponse
    resources:
      - group: ""
        resources: ["pods/log", "pods/status"]
  - level: Request
    resources:
      - group: ""
        resources: ["configmaps"]
        resourceNames: ["controller-leader"]
  - level: Metadata
    resources:
      - group: ""
        resources: ["secrets", "*/scale"]
  - level: Request
    resources:
      - group: "apps"
        resources: ["deployments/*"]
    omitStages: [ResponseStarted]
  - level: Metadata
    namespaces: ["system"]
  - level: Request
    resources:
      - group: "rbac.authorization.platform"
  - level: Metadata
    nonResourceURLs: ["*"]
  - level: RequestResponse
    verbs: ["create", "update", "patch", "delete"]
`);
  const evaluate = policyEvaluator(policy);

  it('parses a valid policy without warnings', () => {
    expect(warnings).toEqual([]);
    expect(policy.rules).toHaveLength(10);
  });

  // Each case: the request, the level it gets, and (when given) the omitted stages.
  const cases: [string, Req, string][] = [
    ['user and verb both match', { user: 'system:kube-proxy', verb: 'watch' }, 'None'],
    ['user matches, verb does not', { user: 'system:kube-proxy', verb: 'list', resource: 'services' }, 'None'],
    ['group and non-resource prefix', { groups: ['system:nodes'], ...nonResource('/healthz/etcd') }, 'None'],
    ['group and exact non-resource path', { groups: ['system:nodes'], ...nonResource('/version') }, 'None'],
    ['non-resource path of another group falls to *', nonResource('/healthz'), 'Metadata'],
    ['subresource listed', { resource: 'pods', subresource: 'log' }, 'RequestResponse'],
    ['the parent of a listed subresource is not matched', { resource: 'pods', verb: 'get' }, 'None'],
    ['resourceNames match', { resource: 'configmaps', name: 'controller-leader' }, 'Request'],
    ['resourceNames do not match', { resource: 'configmaps', name: 'other', verb: 'get' }, 'None'],
    ['resource in list', { resource: 'secrets', name: 's' }, 'Metadata'],
    ['*/subresource', { apiGroup: '', resource: 'replicationcontrollers', subresource: 'scale' }, 'Metadata'],
    [
      'resource/* matches a subresource',
      { apiGroup: 'apps', resource: 'deployments', subresource: 'status' },
      'Request',
    ],
    [
      'resource/* matches the resource itself too, as in Kubernetes',
      { apiGroup: 'apps', resource: 'deployments', verb: 'get' },
      'Request',
    ],
    ['group does not match', { apiGroup: 'batch', resource: 'secrets', verb: 'get' }, 'None'],
    ['namespace rule', { namespace: 'system', resource: 'services' }, 'Metadata'],
    [
      'group with no resources matches all of it',
      { apiGroup: 'rbac.authorization.platform', resource: 'roles' },
      'Request',
    ],
    [
      'verb rule matches resource and non-resource requests',
      { resource: 'services', verb: 'create' },
      'RequestResponse',
    ],
    ['verb rule on a non-resource request', nonResource('/apis', 'get'), 'Metadata'],
    ['no rule matches', { resource: 'services', verb: 'list', namespace: 'default' }, 'None'],
  ];

  it.each(cases)('%s', (_name, a, level) => {
    expect(evaluate.evaluate(attrs(a)).level).toBe(level);
  });

  it('joins the policy-wide and the rule omitStages', () => {
    const d = evaluate.evaluate(attrs({ apiGroup: 'apps', resource: 'deployments', subresource: 'scale' }));
    expect([...d.omitStages].sort()).toEqual(['RequestReceived', 'ResponseStarted']);
    expect([...evaluate.evaluate(attrs({ resource: 'secrets' })).omitStages]).toEqual(['RequestReceived']);
  });

  it('rejects invalid policies with every problem named', () => {
    const bad = (text: string): string => {
      try {
        parsePolicy(text, 'policy.yaml');
      } catch (err) {
        expect(err).toBeInstanceOf(PolicyError);
        return (err as Error).message;
      }
      throw new Error('accepted');
    };
    expect(bad('kind: Policy\napiVersion: audit.platform/v2\nrules: []')).toContain(
      'apiVersion: unsupported "audit.platform/v2"',
    );
    expect(bad('kind: Other\napiVersion: audit.platform/v1')).toContain('kind: must be Policy');
    const m = bad(`
kind: Policy
apiVersion: audit.platform/v1
omitStages: [Done]
rules:
  - level: Everything
  - verbs: [get]
  - level: Metadata
    nonResourceURLs: ["healthz", "/a*b"]
  - level: Metadata
    namespaces: [default]
    nonResourceURLs: ["/x"]
  - level: Metadata
    resources: [{ group: "Bad_Group" }, { resourceNames: ["x"] }]
`);
    expect(m).toContain('policy.yaml: invalid audit policy');
    expect(m).toContain('omitStages[0]: Unsupported value: "Done"');
    expect(m).toContain('rules[0].level: Unsupported value: "Everything"');
    expect(m).toContain('rules[1].level: Required value');
    expect(m).toContain(`rules[2].nonResourceURLs[0]: Invalid value: "healthz": must begin with a '/' or be '*'`);
    expect(m).toContain(
      `rules[2].nonResourceURLs[1]: Invalid value: "/a*b": a wildcard '*' must be the final character`,
    );
    expect(m).toContain('rules[3].nonResourceURLs: Invalid value: rules cannot apply to both');
    expect(m).toContain('rules[4].resources[0].group: Invalid value: "Bad_Group"');
    expect(m).toContain(
      'rules[4].resources[1].resourceNames: Invalid value: using resourceNames requires at least one resource',
    );
    expect(bad('{ not yaml')).toContain('policy.yaml: not valid YAML or JSON');
    expect(bad('- a list')).toContain('must hold a Policy object');
  });

  it('reads JSON files and warns about unknown fields (omitManagedFields came after 1.21)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-policy-'));
    const file = join(dir, 'policy.json');
    writeFileSync(
      file,
      JSON.stringify({
        apiVersion: 'audit.platform/v1beta1',
        kind: 'Policy',
        omitManagedFields: true,
        rules: [{ level: 'Metadata', omitManagedFields: true }],
      }),
    );
    const r = loadPolicyFile(file);
    expect(r.policy.rules).toEqual([{ level: 'Metadata' }]);
    expect(r.warnings).toEqual([
      `${file}: omitManagedFields: unknown field, ignored`,
      `${file}: rules[0].omitManagedFields: unknown field, ignored`,
    ]);
    expect(policyEvaluator(r.policy).evaluate(attrs({})).level).toBe('Metadata');
    expect(() => loadPolicyFile(join(dir, 'missing.yaml'))).toThrow(/--audit-policy-file: cannot read .*missing\.yaml/);
  });

  it('an empty policy records nothing', () => {
    const e = policyEvaluator(parsePolicy('apiVersion: audit.platform/v1\nkind: Policy').policy);
    expect(e.evaluate(attrs({})).level).toBe('None');
  });
});
