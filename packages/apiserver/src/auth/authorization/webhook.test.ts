import { type Attributes } from '../authorizer';
import { reviewFor } from './webhook';

const a: Attributes = {
  user: { name: 'u', groups: ['g'], uid: '42', extra: { scopes: ['a'] } },
  verb: 'get',
  resourceRequest: false,
  namespace: '',
  apiGroup: '',
  apiVersion: '',
  resource: '',
  subresource: '',
  name: '',
  path: '/healthz',
};

describe('reviewFor', () => {
  it('names the groups `group` in v1beta1 and `groups` in v1', () => {
    expect(reviewFor(a, 'v1beta1')).toEqual({
      apiVersion: 'authorization.platform/v1beta1',
      kind: 'SubjectAccessReview',
      spec: {
        nonResourceAttributes: { path: '/healthz', verb: 'get' },
        user: 'u',
        group: ['g'],
        extra: { scopes: ['a'] },
        uid: '42',
      },
    });
    expect(reviewFor(a, 'v1')).toEqual({
      apiVersion: 'authorization.platform/v1',
      kind: 'SubjectAccessReview',
      spec: {
        nonResourceAttributes: { path: '/healthz', verb: 'get' },
        user: 'u',
        groups: ['g'],
        extra: { scopes: ['a'] },
        uid: '42',
      },
    });
  });
});
