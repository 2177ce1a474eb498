import { type ApiObject, type FieldError, type Node, NodeKind } from '@platform/api';

import { type RequestContext } from '../../rest/rest';
import { nodeStrategy, validateNode, validateNodeUpdate } from './strategy';

const show = (errs: FieldError[]): string[] => errs.map((e) => `${e.type} ${e.field}`);
const ctx: RequestContext = { namespace: '', now: () => 0 };

describe('validateNode', () => {
  it.each<[string, Node['spec'], string[]]>([
    [
      'valid taints and CIDRs',
      { taints: [{ key: 'k', value: 'v', effect: 'NoSchedule' }], podCIDRs: ['10.0.0.0/24'] },
      [],
    ],
    [
      'invalid and duplicate taints',
      {
        taints: [
          { key: '', effect: 'NoSchedule' },
          { key: 'k', effect: 'Sometimes' as never },
          { key: 'd', effect: 'NoExecute' },
          { key: 'd', effect: 'NoExecute' },
        ],
      },
      [
        'FieldValueRequired spec.taints[0].key',
        'FieldValueNotSupported spec.taints[1].effect',
        'FieldValueDuplicate spec.taints[3].effect',
      ],
    ],
    ['a bad CIDR', { podCIDRs: ['10.0.0.0'] }, ['FieldValueInvalid spec.podCIDRs[0]']],
  ])('%s', (_name, spec, expected) => {
    expect(show(validateNode({ metadata: { name: 'n' }, spec }))).toEqual(expected);
  });

  it('sets podCIDR and providerID once', () => {
    const old: Node = {
      metadata: { name: 'n' },
      spec: { podCIDR: '10.0.0.0/24', podCIDRs: ['10.0.0.0/24'], providerID: 'a' },
    };
    expect(show(validateNodeUpdate(old, { metadata: { name: 'n' }, spec: {} }))).toEqual([]);
    expect(
      show(
        validateNodeUpdate(
          { metadata: { name: 'n' }, spec: { podCIDR: '10.1.0.0/24', podCIDRs: ['10.1.0.0/24'], providerID: 'b' } },
          old,
        ),
      ),
    ).toEqual(['FieldValueForbidden spec.podCIDRs', 'FieldValueForbidden spec.providerID']);
  });

  it('accepts the status on create', () => {
    const node: Node = { metadata: { name: 'n' }, status: { capacity: { cpu: '2' } } };
    nodeStrategy(NodeKind).prepareForCreate(ctx, node as ApiObject);
    expect(node.status).toEqual({ capacity: { cpu: '2' } });
  });
});
