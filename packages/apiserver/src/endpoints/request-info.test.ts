import { isCleanPath, isLongRunning, isMutatingVerb, parseRequestInfo } from './request-info';

describe('parseRequestInfo', () => {
  it.each([
    // method, url, verb, group, version, namespace, resource, subresource, name
    ['GET', '/api/v1/pods', 'list', '', 'v1', '', 'pods', '', ''],
    ['GET', '/api/v1/pods?watch=1', 'watch', '', 'v1', '', 'pods', '', ''],
    ['GET', '/api/v1/pods?watch=true&resourceVersion=5', 'watch', '', 'v1', '', 'pods', '', ''],
    ['GET', '/api/v1/pods?watch=false', 'list', '', 'v1', '', 'pods', '', ''],
    // `watch` as Go's strconv.ParseBool reads it (the Python client sends `True`); a bad value is a list here
    ['GET', '/api/v1/pods?watch=True', 'watch', '', 'v1', '', 'pods', '', ''],
    ['GET', '/api/v1/pods?watch=t', 'watch', '', 'v1', '', 'pods', '', ''],
    ['GET', '/api/v1/pods?watch=TRUE', 'watch', '', 'v1', '', 'pods', '', ''],
    ['GET', '/api/v1/pods?watch=F', 'list', '', 'v1', '', 'pods', '', ''],
    ['GET', '/api/v1/pods?watch=yes', 'list', '', 'v1', '', 'pods', '', ''],
    ['GET', '/api/v1/namespaces/default/pods', 'list', '', 'v1', 'default', 'pods', '', ''],
    ['GET', '/api/v1/namespaces/default/pods/web', 'get', '', 'v1', 'default', 'pods', '', 'web'],
    ['GET', '/api/v1/namespaces/default/pods/web?watch=1', 'get', '', 'v1', 'default', 'pods', '', 'web'],
    ['PUT', '/api/v1/namespaces/default/pods/web/status', 'update', '', 'v1', 'default', 'pods', 'status', 'web'],
    ['POST', '/api/v1/namespaces/default/pods/web/binding', 'create', '', 'v1', 'default', 'pods', 'binding', 'web'],
    ['POST', '/api/v1/namespaces/default/pods', 'create', '', 'v1', 'default', 'pods', '', ''],
    ['PATCH', '/apis/apps/v1/namespaces/ns/deployments/d', 'patch', 'apps', 'v1', 'ns', 'deployments', '', 'd'],
    ['DELETE', '/apis/apps/v1/namespaces/ns/deployments/d', 'delete', 'apps', 'v1', 'ns', 'deployments', '', 'd'],
    [
      'DELETE',
      '/apis/apps/v1/namespaces/ns/deployments',
      'deletecollection',
      'apps',
      'v1',
      'ns',
      'deployments',
      '',
      '',
    ],
    [
      'GET',
      '/apis/rbac.authorization.platform/v1/clusterroles/admin',
      'get',
      'rbac.authorization.platform',
      'v1',
      '',
      'clusterroles',
      '',
      'admin',
    ],
    // Kubernetes' spelling of a group is read as the platform's
    [
      'POST',
      '/apis/rbac.authorization.k8s.io/v1/clusterroles',
      'create',
      'rbac.authorization.platform',
      'v1',
      '',
      'clusterroles',
      '',
      '',
    ],
    // the namespace itself, and its own subresources
    ['GET', '/api/v1/namespaces', 'list', '', 'v1', '', 'namespaces', '', ''],
    ['GET', '/api/v1/namespaces/kube', 'get', '', 'v1', 'kube', 'namespaces', '', 'kube'],
    ['PUT', '/api/v1/namespaces/kube/finalize', 'update', '', 'v1', 'kube', 'namespaces', 'finalize', 'kube'],
    ['PUT', '/api/v1/namespaces/kube/status', 'update', '', 'v1', 'kube', 'namespaces', 'status', 'kube'],
    // the deprecated watch prefix
    ['GET', '/api/v1/watch/namespaces/default/pods', 'watch', '', 'v1', 'default', 'pods', '', ''],
    ['GET', '/api/v1/watch/namespaces/default/pods/web', 'watch', '', 'v1', 'default', 'pods', '', 'web'],
    // a list narrowed to one name is authorized as that name
    ['GET', '/api/v1/namespaces/d/pods?fieldSelector=metadata.name%3Dweb', 'list', '', 'v1', 'd', 'pods', '', 'web'],
    [
      'GET',
      '/api/v1/namespaces/d/pods?fieldSelector=metadata.name%3D%3Dweb,status.phase%3DRunning',
      'list',
      '',
      'v1',
      'd',
      'pods',
      '',
      'web',
    ],
    ['GET', '/api/v1/namespaces/d/pods?fieldSelector=metadata.name!%3Dweb', 'list', '', 'v1', 'd', 'pods', '', ''],
  ])('%s %s', (method, url, verb, group, version, namespace, resource, subresource, name) => {
    expect(parseRequestInfo(method, url)).toMatchObject({
      isResourceRequest: true,
      verb,
      apiGroup: group,
      apiVersion: version,
      namespace,
      resource,
      subresource,
      name,
    });
  });

  it.each([
    ['GET', '/healthz'],
    ['GET', '/api'],
    ['GET', '/api/v1'],
    ['GET', '/apis'],
    ['GET', '/apis/apps'],
    ['GET', '/apis/apps/v1'],
    ['GET', '/openapi/v2'],
    ['GET', '/api/v1/watch'],
    ['GET', '/api/v1/pods/%E0%A4%A'],
  ])('%s %s is a non-resource request', (method, url) => {
    expect(parseRequestInfo(method, url)).toMatchObject({
      isResourceRequest: false,
      verb: 'get',
      path: url.split('?')[0],
    });
  });

  it('keeps the rest of a proxy path', () => {
    expect(parseRequestInfo('GET', '/api/v1/namespaces/d/pods/web/proxy/a/b').parts).toEqual([
      'pods',
      'web',
      'proxy',
      'a',
      'b',
    ]);
  });

  it('classifies verbs', () => {
    expect(['create', 'update', 'patch', 'delete', 'deletecollection'].every(isMutatingVerb)).toBe(true);
    expect(['get', 'list', 'watch'].some(isMutatingVerb)).toBe(false);
    expect(isLongRunning(parseRequestInfo('GET', '/api/v1/pods?watch=1'))).toBe(true);
    expect(isLongRunning(parseRequestInfo('GET', '/api/v1/namespaces/d/pods/p/log'))).toBe(true);
    expect(isLongRunning(parseRequestInfo('GET', '/api/v1/pods'))).toBe(false);
  });

  it('takes a path with dot segments or doubled slashes for a non-resource request (never resolved)', () => {
    for (const path of [
      '/api/v1/namespaces/ns/configmaps/../secrets',
      '/api/v1/namespaces/ns/configmaps/%2e%2e/secrets',
      '/api/v1/namespaces/ns/configmaps/%2E.',
      '/api/v1/namespaces/ns/configmaps/.',
      '/api/v1/namespaces//ns/configmaps/x',
      '//api/v1/pods',
      'api/v1/pods',
    ]) {
      expect([path, isCleanPath(path), parseRequestInfo('GET', path).isResourceRequest]).toEqual([path, false, false]);
    }
    for (const path of [
      '/api/v1/pods/',
      '/api/v1/namespaces/ns/configmaps/..x',
      '/api/v1/namespaces/ns/configmaps/a.b',
    ]) {
      expect([path, isCleanPath(path)]).toEqual([path, true]);
    }
  });
});

describe('Kubernetes group spellings', () => {
  it('records the spelling of a resource request, and leaves discovery paths alone', () => {
    const info = parseRequestInfo('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews');
    expect([info.apiGroup, info.requestedGroup, info.resource]).toEqual([
      'authorization.platform',
      'authorization.k8s.io',
      'selfsubjectaccessreviews',
    ]);
    expect(parseRequestInfo('GET', '/apis/apps/v1/deployments').requestedGroup).toBeUndefined();
    const discovery = parseRequestInfo('GET', '/apis/rbac.authorization.k8s.io/v1');
    expect([discovery.isResourceRequest, discovery.apiGroup]).toEqual([false, 'rbac.authorization.k8s.io']);
  });
});
