import {
  type ApiObject,
  type FieldError,
  LocalSubjectAccessReviewKind,
  SelfSubjectAccessReviewKind,
} from '@platform/api';

import { type RequestContext } from '../../rest/rest';
import { AccessReviewREST, ALWAYS_ALLOW_REASON, validateAccessReview } from './rest';

const show = (errs: FieldError[]): string[] => errs.map((e) => `${e.type} ${e.field}`);

describe('validateAccessReview', () => {
  it.each<[string, string, object, string[]]>([
    ['a resource review', 'SubjectAccessReview', { spec: { user: 'a', resourceAttributes: { verb: 'get' } } }, []],
    ['no attributes', 'SubjectAccessReview', { spec: { user: 'a' } }, ['FieldValueInvalid spec.resourceAttributes']],
    [
      'both attributes',
      'SubjectAccessReview',
      { spec: { groups: ['g'], resourceAttributes: {}, nonResourceAttributes: {} } },
      ['FieldValueInvalid spec.nonResourceAttributes'],
    ],
    ['no subject', 'SubjectAccessReview', { spec: { resourceAttributes: {} } }, ['FieldValueInvalid spec.user']],
    [
      'a self review needs no subject',
      'SelfSubjectAccessReview',
      { spec: { nonResourceAttributes: { path: '/x' } } },
      [],
    ],
    [
      'a local review in another namespace',
      'LocalSubjectAccessReview',
      { metadata: { namespace: 'a' }, spec: { user: 'u', resourceAttributes: { namespace: 'b' } } },
      ['FieldValueInvalid spec.resourceAttributes.namespace'],
    ],
  ])('%s', (_name, kind, review, expected) => {
    expect(show(validateAccessReview(review as never, kind))).toEqual(expected);
  });
});

describe('AccessReviewREST', () => {
  const ctx: RequestContext = { namespace: 'ns', now: () => 0, user: { name: 'alice', groups: ['devs'] } };

  it('fills the subject of a self review from the request and allows it', async () => {
    const r = (await new AccessReviewREST(SelfSubjectAccessReviewKind).create(
      ctx,
      { spec: { resourceAttributes: { verb: 'list', resource: 'pods' } } } as ApiObject,
      undefined,
      { dryRun: false },
    )) as ApiObject & { spec: { user: string; groups: string[] }; status: object };
    expect([r.spec.user, r.spec.groups]).toEqual(['alice', ['devs']]);
    expect(r.status).toEqual({ allowed: true, reason: ALWAYS_ALLOW_REASON });
  });

  it('puts a local review in the request namespace', async () => {
    const r = await new AccessReviewREST(LocalSubjectAccessReviewKind).create(
      ctx,
      { spec: { user: 'bob', resourceAttributes: { namespace: 'ns', verb: 'get' } } } as ApiObject,
      undefined,
      { dryRun: false },
    );
    expect(r.metadata?.namespace).toBe('ns');
  });
});
