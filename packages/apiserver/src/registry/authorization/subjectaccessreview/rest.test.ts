import {
  type ApiObject,
  type FieldError,
  LocalSubjectAccessReviewKind,
  SelfSubjectAccessReviewKind,
  SubjectAccessReviewKind,
} from '@platform/api';

import { type RequestContext } from '../../rest/rest';
import { type Authorizer } from '../../../auth/authorizer';
import { AccessReviewREST, validateAccessReview } from './rest';

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
    expect(r.status).toEqual({ allowed: true });
  });

  it('answers from the authorizer it was given: allowed, denied and the reason', async () => {
    const seen: string[] = [];
    const authorizer: Authorizer = {
      authorize: async (a) => {
        seen.push(`${a.user.name} ${a.verb} ${a.resource} ${a.namespace}`);
        return a.verb === 'delete'
          ? { decision: 'deny', reason: 'no deletes' }
          : { decision: 'noOpinion', reason: 'x' };
      },
    };
    const ask = async (verb: string): Promise<unknown> =>
      (
        (await new AccessReviewREST(SelfSubjectAccessReviewKind, authorizer).create(
          ctx,
          { spec: { resourceAttributes: { verb, resource: 'pods', namespace: 'ns' } } } as ApiObject,
          undefined,
          { dryRun: false },
        )) as ApiObject & { status: object }
      ).status;
    expect(await ask('delete')).toEqual({ allowed: false, denied: true, reason: 'no deletes' });
    expect(await ask('get')).toEqual({ allowed: false, reason: 'x' });
    expect(seen).toEqual(['alice delete pods ns', 'alice get pods ns']);
  });

  it('reads a review with fields of the wrong types as empty instead of failing', async () => {
    const seen: unknown[] = [];
    const authorizer: Authorizer = {
      authorize: async (a) => {
        seen.push(a.user, a.verb, a.resource);
        return { decision: 'noOpinion', reason: '' };
      },
    };
    const r = await new AccessReviewREST(SubjectAccessReviewKind, authorizer).create(
      ctx,
      {
        spec: { user: 5, groups: 'abc', extra: { a: 'x' }, resourceAttributes: { verb: ['get'], resource: 'pods' } },
      } as unknown as ApiObject,
      undefined,
      { dryRun: false },
    );
    expect((r as ApiObject & { status: object }).status).toEqual({ allowed: false });
    expect(seen).toEqual([{ name: '', groups: [], extra: { a: [] } }, '', 'pods']);
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
