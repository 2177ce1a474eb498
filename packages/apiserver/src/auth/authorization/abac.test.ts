import { type Attributes } from '../authorizer';
import { AbacAuthorizer, parsePolicies } from './abac';

const line = (spec: object): string =>
  JSON.stringify({ apiVersion: 'abac.authorization.platform/v1beta1', kind: 'Policy', spec });

function attrs(user: string, groups: string[], verb: string, o: Partial<Attributes> = {}): Attributes {
  return {
    user: { name: user, groups },
    verb,
    resourceRequest: true,
    namespace: 'ns',
    apiGroup: '',
    apiVersion: 'v1',
    resource: 'pods',
    subresource: '',
    name: '',
    path: '',
    ...o,
  };
}

describe('ABAC', () => {
  const z = new AbacAuthorizer(
    parsePolicies(
      [
        '# a comment',
        line({ user: 'alice', namespace: '*', resource: '*', apiGroup: '*' }),
        '',
        line({ user: 'bob', readonly: true, namespace: 'ns', resource: 'pods', apiGroup: '' }),
        line({ group: 'ops', nonResourcePath: '/logs/*', readonly: true }),
      ].join('\n'),
    ),
  );
  it.each<[string, Attributes, boolean]>([
    ['alice anything', attrs('alice', [], 'delete', { apiGroup: 'apps', resource: 'deployments' }), true],
    ['bob reads pods in ns', attrs('bob', [], 'list'), true],
    ['bob may not write', attrs('bob', [], 'create'), false],
    ['bob other namespace', attrs('bob', [], 'get', { namespace: 'other' }), false],
    ['bob other resource', attrs('bob', [], 'get', { resource: 'secrets' }), false],
    ['ops reads a log path', attrs('carol', ['ops'], 'get', { resourceRequest: false, path: '/logs/x' }), true],
    ['ops path is not a resource', attrs('carol', ['ops'], 'get'), false],
    ['nobody else', attrs('dave', [], 'get'), false],
  ])('%s', async (_name, a, allowed) => {
    const r = await z.authorize(a);
    expect(r.decision).toBe(allowed ? 'allow' : 'noOpinion');
    if (!allowed) expect(r.reason).toBe('No policy matched.');
  });

  it.each([
    ['not JSON', '{', 'line 1: not a JSON object'],
    ['wrong version', JSON.stringify({ apiVersion: 'v1', kind: 'Policy', spec: {} }), 'line 1: unsupported policy'],
    ['unknown field', line({ usr: 'x' }), 'line 1: unknown field spec.usr'],
    ['wrong type', line({ readonly: 'yes' }), 'line 1: spec.readonly must be a boolean'],
  ])('rejects a policy file with %s', (_name, text, message) => {
    expect(() => parsePolicies(text)).toThrow(message);
  });
});
