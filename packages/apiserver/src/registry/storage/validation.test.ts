import { type FieldError, fieldErrorToString } from '@platform/api';

import { validateRuntimeClass } from '../node/runtimeclass';
import {
  validateCSIDriver,
  validateCSIDriverUpdate,
  validateCSINode,
  validateCSIStorageCapacity,
  validateStorageClass,
  validateStorageClassUpdate,
  validateVolumeAttachment,
  validateVolumeAttachmentUpdate,
} from './validation';

const show = (errs: FieldError[]): string[] => errs.map(fieldErrorToString);

describe('validateStorageClass (1.21 messages)', () => {
  const sc = (o: object): Parameters<typeof validateStorageClass>[0] => ({
    metadata: { name: 'sc' },
    provisioner: 'csi.example.com',
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'Immediate',
    ...o,
  });
  it.each<[string, object, string[]]>([
    ['a valid class', {}, []],
    ['no provisioner', { provisioner: '' }, ['provisioner: Required value']],
    [
      'an unknown reclaim policy',
      { reclaimPolicy: 'Recycle' },
      ['reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain"'],
    ],
    [
      'an unknown binding mode',
      { volumeBindingMode: 'Later' },
      ['volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"'],
    ],
    [
      'a topology term without requirements',
      { allowedTopologies: [{}] },
      ['allowedTopologies[0]: Required value: must have at least one label requirement'],
    ],
  ])('%s', (_name, o, expected) => {
    expect(show(validateStorageClass(sc(o)))).toEqual(expected);
  });

  it('forbids changing parameters, provisioner, reclaim policy and binding mode', () => {
    const old = sc({ parameters: { a: '1' } });
    const next = sc({ provisioner: 'other.io', reclaimPolicy: 'Retain', volumeBindingMode: 'WaitForFirstConsumer' });
    expect(show(validateStorageClassUpdate(next, old))).toEqual([
      'parameters: Forbidden: updates to parameters are forbidden.',
      'provisioner: Forbidden: updates to provisioner are forbidden.',
      'reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden.',
      'volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable',
    ]);
  });
});

describe('validateCSIDriver', () => {
  const spec = { attachRequired: true, podInfoOnMount: false, storageCapacity: false };
  it.each<[string, string, object, string[]]>([
    ['a valid driver', 'csi.example.com', spec, []],
    [
      'unset required flags',
      'csi.example.com',
      {},
      [
        'spec.attachedRequired: Required value',
        'spec.podInfoOnMount: Required value',
        'spec.storageCapacity: Required value',
      ],
    ],
    [
      'a short token',
      'csi.example.com',
      { ...spec, tokenRequests: [{ audience: 'a', expirationSeconds: 60 }, { audience: 'a' }] },
      [
        'spec.tokenRequests[0].expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes',
        'spec.tokenRequests[1].audience: Duplicate value: "a"',
      ],
    ],
    [
      'an unknown mode',
      'csi.example.com',
      { ...spec, volumeLifecycleModes: ['Forever'] },
      ['spec.volumeLifecycleModes: Unsupported value: "Forever": supported values: "Ephemeral", "Persistent"'],
    ],
    ['a long name', 'a'.repeat(64), spec, ['metadata.name: Too long: must have at most 63 bytes']],
  ])('%s', (_name, name, s, expected) => {
    expect(show(validateCSIDriver({ metadata: { name }, spec: s }))).toEqual(expected);
  });

  it('keeps attachRequired', () => {
    const old = { metadata: { name: 'd.io' }, spec };
    expect(show(validateCSIDriverUpdate({ ...old, spec: { ...spec, attachRequired: false } }, old))).toEqual([
      'spec.attachRequired: Invalid value: false: field is immutable',
    ]);
  });
});

describe('validateCSINode', () => {
  it.each<[string, object[], string[]]>([
    ['a valid node', [{ name: 'a.io', nodeID: 'n1', topologyKeys: ['zone'] }], []],
    ['no node ID', [{ name: 'a.io', nodeID: '' }], ['spec.drivers[0].nodeID: Required value: nodeID cannot be empty']],
    [
      'a driver twice',
      [
        { name: 'a.io', nodeID: 'n' },
        { name: 'a.io', nodeID: 'n' },
      ],
      ['spec.drivers[1].name: Duplicate value: "a.io"'],
    ],
  ])('%s', (_name, drivers, expected) => {
    expect(show(validateCSINode({ metadata: { name: 'n1' }, spec: { drivers } as never }))).toEqual(expected);
  });
});

describe('validateVolumeAttachment', () => {
  const va = (source: object): Parameters<typeof validateVolumeAttachment>[0] => ({
    metadata: { name: 'va' },
    spec: { attacher: 'csi.example.com', source, nodeName: 'n1' },
  });
  it.each<[string, object, string[]]>([
    ['a volume by name', { persistentVolumeName: 'pv' }, []],
    [
      'no source',
      {},
      ['spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName'],
    ],
    [
      'both sources',
      { persistentVolumeName: 'pv', inlineVolumeSpec: {} },
      ['spec.source: Forbidden: must specify exactly one of inlineVolumeSpec and persistentVolumeName'],
    ],
    [
      'an empty name',
      { persistentVolumeName: '' },
      ['spec.source.persistentVolumeName: Required value: must specify non empty persistentVolumeName'],
    ],
  ])('%s', (_name, source, expected) => {
    expect(show(validateVolumeAttachment(va(source)))).toEqual(expected);
  });

  it('keeps the spec', () => {
    const errs = validateVolumeAttachmentUpdate(va({ persistentVolumeName: 'b' }), va({ persistentVolumeName: 'a' }));
    expect(errs.map((e) => `${e.type} ${e.field} ${e.detail}`)).toEqual(['FieldValueInvalid spec field is immutable']);
  });
});

describe('validateCSIStorageCapacity and validateRuntimeClass', () => {
  it('checks the class name and the capacity', () => {
    expect(show(validateCSIStorageCapacity({ storageClassName: '', capacity: '-1' } as never))).toEqual([
      'storageClassName: Required value',
      'capacity: Invalid value: "-1": must be greater than or equal to 0',
    ]);
  });

  it('checks the handler and the overhead', () => {
    expect(show(validateRuntimeClass({ handler: 'runc', overhead: { podFixed: { cpu: '-1' } } }))).toEqual([
      'overhead.podFixed[cpu]: Invalid value: "-1": must be greater than or equal to 0',
    ]);
    expect(show(validateRuntimeClass({ handler: 'A' }))[0]).toMatch(
      /^handler: Invalid value: "A": a lowercase RFC 1123 label/,
    );
  });
});
