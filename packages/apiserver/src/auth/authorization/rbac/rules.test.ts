import { type Attributes, type PolicyRuleLike } from '../../authorizer';
import { compactRules, compactString, covers, ruleAllows } from './rules';

function res(verb: string, group: string, resource: string, o: Partial<Attributes> = {}): Attributes {
  return {
    user: { name: 'u', groups: [] },
    verb,
    resourceRequest: true,
    namespace: 'ns',
    apiGroup: group,
    apiVersion: 'v1',
    resource,
    subresource: '',
    name: '',
    path: '',
    ...o,
  };
}

function url(verb: string, path: string): Attributes {
  return { ...res(verb, '', ''), resourceRequest: false, namespace: '', path };
}

describe('ruleAllows', () => {
  it.each<[string, PolicyRuleLike, Attributes, boolean]>([
    ['exact', { verbs: ['get'], apiGroups: [''], resources: ['pods'] }, res('get', '', 'pods'), true],
    ['other verb', { verbs: ['get'], apiGroups: [''], resources: ['pods'] }, res('list', '', 'pods'), false],
    ['other group', { verbs: ['get'], apiGroups: [''], resources: ['pods'] }, res('get', 'apps', 'pods'), false],
    ['* verbs', { verbs: ['*'], apiGroups: [''], resources: ['pods'] }, res('deletecollection', '', 'pods'), true],
    [
      '* groups',
      { verbs: ['get'], apiGroups: ['*'], resources: ['deployments'] },
      res('get', 'apps', 'deployments'),
      true,
    ],
    ['* resources', { verbs: ['get'], apiGroups: [''], resources: ['*'] }, res('get', '', 'secrets'), true],
    [
      '* resources covers subresources',
      { verbs: ['get'], apiGroups: [''], resources: ['*'] },
      res('get', '', 'pods', { subresource: 'log' }),
      true,
    ],
    [
      'a resource does not cover its subresources',
      { verbs: ['get'], apiGroups: [''], resources: ['pods'] },
      res('get', '', 'pods', { subresource: 'log' }),
      false,
    ],
    [
      'pods/log',
      { verbs: ['get'], apiGroups: [''], resources: ['pods/log'] },
      res('get', '', 'pods', { subresource: 'log' }),
      true,
    ],
    [
      'pods/log is not pods',
      { verbs: ['get'], apiGroups: [''], resources: ['pods/log'] },
      res('get', '', 'pods'),
      false,
    ],
    [
      '*/scale',
      { verbs: ['update'], apiGroups: ['apps'], resources: ['*/scale'] },
      res('update', 'apps', 'deployments', { subresource: 'scale' }),
      true,
    ],
    [
      '*/scale is not */status',
      { verbs: ['update'], apiGroups: ['apps'], resources: ['*/scale'] },
      res('update', 'apps', 'deployments', { subresource: 'status' }),
      false,
    ],
    [
      'resourceNames: the name',
      { verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] },
      res('get', '', 'configmaps', { name: 'a' }),
      true,
    ],
    [
      'resourceNames: another name',
      { verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] },
      res('get', '', 'configmaps', { name: 'b' }),
      false,
    ],
    [
      'resourceNames: a list has no name',
      { verbs: ['list'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] },
      res('list', '', 'configmaps'),
      false,
    ],
    ['url exact', { verbs: ['get'], nonResourceURLs: ['/healthz'] }, url('get', '/healthz'), true],
    ['url other', { verbs: ['get'], nonResourceURLs: ['/healthz'] }, url('get', '/healthz/ping'), false],
    ['url prefix', { verbs: ['get'], nonResourceURLs: ['/healthz/*'] }, url('get', '/healthz/ping'), true],
    ['url *', { verbs: ['get'], nonResourceURLs: ['*'] }, url('get', '/anything'), true],
    ['url verb', { verbs: ['get'], nonResourceURLs: ['*'] }, url('post', '/anything'), false],
    ['a url rule is not a resource rule', { verbs: ['*'], nonResourceURLs: ['*'] }, res('get', '', 'pods'), false],
    [
      'a resource rule is not a url rule',
      { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
      url('get', '/x'),
      false,
    ],
  ])('%s', (_name, rule, a, want) => {
    expect(ruleAllows(a, rule)).toBe(want);
  });
});

describe('covers', () => {
  const admin: PolicyRuleLike[] = [
    { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
    { verbs: ['*'], nonResourceURLs: ['*'] },
  ];
  it.each<[string, PolicyRuleLike[], PolicyRuleLike[], boolean]>([
    [
      'everything covers anything',
      admin,
      [{ verbs: ['get'], apiGroups: ['apps'], resources: ['deployments/scale'] }],
      true,
    ],
    [
      'a subset',
      [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }],
      [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }],
      true,
    ],
    [
      'more verbs',
      [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }],
      [{ verbs: ['get', 'delete'], apiGroups: [''], resources: ['pods'] }],
      false,
    ],
    [
      'a wildcard is not covered by a list',
      [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }],
      [{ verbs: ['*'], apiGroups: [''], resources: ['pods'] }],
      false,
    ],
    [
      'named covers by name',
      [{ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['a'] }],
      [{ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['a'] }],
      true,
    ],
    [
      'named does not cover unnamed',
      [{ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['a'] }],
      [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }],
      false,
    ],
    [
      '*/scale covers deployments/scale',
      [{ verbs: ['get'], apiGroups: ['apps'], resources: ['*/scale'] }],
      [{ verbs: ['get'], apiGroups: ['apps'], resources: ['deployments/scale'] }],
      true,
    ],
    [
      'url prefix',
      [{ verbs: ['get'], nonResourceURLs: ['/logs/*'] }],
      [{ verbs: ['get'], nonResourceURLs: ['/logs/a'] }],
      true,
    ],
    [
      'url other',
      [{ verbs: ['get'], nonResourceURLs: ['/logs'] }],
      [{ verbs: ['get'], nonResourceURLs: ['/metrics'] }],
      false,
    ],
    [
      'the union of two rules',
      [
        { verbs: ['get'], apiGroups: [''], resources: ['pods'] },
        { verbs: ['list'], apiGroups: [''], resources: ['pods'] },
      ],
      [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }],
      true,
    ],
  ])('%s', (_name, owner, wanted, want) => {
    expect(covers(owner, wanted).covered).toBe(want);
  });

  it('names what is missing, as Kubernetes prints it', () => {
    const { missing } = covers(
      [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }],
      [{ verbs: ['get', 'delete'], apiGroups: [''], resources: ['pods'] }],
    );
    expect(missing.map(compactString)).toEqual(['{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}']);
    const more = covers(
      [],
      [{ verbs: ['get', 'list'], apiGroups: ['', 'apps'], resources: ['pods'], resourceNames: [] }],
    );
    expect(compactRules(more.missing).map(compactString)).toEqual([
      '{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}',
      '{APIGroups:["apps"], Resources:["pods"], Verbs:["get" "list"]}',
    ]);
  });
});
