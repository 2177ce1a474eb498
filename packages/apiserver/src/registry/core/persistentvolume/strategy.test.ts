import { type FieldError, type PersistentVolume, type PersistentVolumeClaim } from '@platform/api';

import {
  validatePersistentVolume,
  validatePersistentVolumeClaim,
  validatePersistentVolumeClaimUpdate,
} from './strategy';

const show = (errs: FieldError[]): string[] => errs.map((e) => `${e.type} ${e.field}`);

describe('validatePersistentVolume', () => {
  it.each<[string, PersistentVolume['spec'], string[]]>([
    [
      'a host path volume',
      { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/d' } },
      [],
    ],
    [
      'nothing',
      {},
      ['FieldValueRequired spec.accessModes', 'FieldValueRequired spec.capacity[storage]', 'FieldValueRequired spec'],
    ],
    [
      'two sources',
      {
        capacity: { storage: '1Gi' },
        accessModes: ['ReadWriteOnce'],
        hostPath: { path: '/d' },
        nfs: { server: 's', path: '/' },
      },
      ['FieldValueForbidden spec.nfs'],
    ],
  ])('%s', (_name, spec, expected) => {
    expect(show(validatePersistentVolume({ metadata: { name: 'pv' }, spec }))).toEqual(expected);
  });
});

describe('persistent volume claims', () => {
  const claim = (storage: string, volumeName?: string): PersistentVolumeClaim => ({
    metadata: { name: 'c' },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage } },
      ...(volumeName ? { volumeName } : {}),
    },
  });
  it('require access modes and a storage request', () => {
    expect(show(validatePersistentVolumeClaim({ metadata: { name: 'c' }, spec: {} }))).toEqual([
      'FieldValueRequired spec.accessModes',
      'FieldValueRequired spec.resources.requests[storage]',
    ]);
  });

  it('change only their requests (and the binder sets the volume once)', () => {
    expect(show(validatePersistentVolumeClaimUpdate(claim('2Gi', 'pv-1'), claim('1Gi')))).toEqual([]);
    expect(
      show(
        validatePersistentVolumeClaimUpdate(
          { ...claim('1Gi'), spec: { ...claim('1Gi').spec, accessModes: ['ReadWriteMany'] } },
          claim('1Gi'),
        ),
      ),
    ).toEqual(['FieldValueForbidden spec']);
  });
});
