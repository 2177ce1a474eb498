import { type ApiObject, type FieldError, type ResourceQuota } from '@platform/api';

import { type RequestContext } from '../../rest/rest';
import { resourceQuotaStatusStrategy, validateResourceQuota } from './strategy';

const show = (errs: FieldError[]): string[] => errs.map((e) => `${e.type} ${e.field}`);
const ctx: RequestContext = { namespace: 'default', now: () => 0 };

describe('validateResourceQuota', () => {
  it.each<[string, ResourceQuota['spec'], string[]]>([
    [
      'a valid quota',
      { hard: { pods: '10', 'requests.cpu': '4', 'count/deployments.apps': '2' }, scopes: ['NotTerminating'] },
      [],
    ],
    [
      'a negative and a malformed quantity',
      { hard: { pods: '-1', cpu: 'many' } },
      ['FieldValueInvalid spec.hard[pods]', 'FieldValueInvalid spec.hard[cpu]'],
    ],
    ['an unknown scope', { scopes: ['Sometimes'] }, ['FieldValueNotSupported spec.scopes[0]']],
    ['conflicting scopes', { scopes: ['Terminating', 'NotTerminating'] }, ['FieldValueInvalid spec.scopes']],
  ])('%s', (_name, spec, expected) => {
    expect(show(validateResourceQuota({ metadata: { name: 'q' }, spec }))).toEqual(expected);
  });

  it('validates the status written through the status subresource', () => {
    const rq = { metadata: { name: 'q' }, status: { hard: { pods: '1' }, used: { pods: '-2' } } } as ResourceQuota;
    expect(show(resourceQuotaStatusStrategy().validateUpdate(ctx, rq as ApiObject, rq as ApiObject))).toEqual([
      'FieldValueInvalid status.used[pods]',
    ]);
  });
});
