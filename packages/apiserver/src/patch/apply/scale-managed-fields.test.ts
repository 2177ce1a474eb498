import { parentManagedFields, scaleManagedFields } from './scale-managed-fields';

const entry = (
  manager: string,
  operation: 'Apply' | 'Update',
  fieldsV1: Record<string, unknown>,
  apiVersion = 'apps/v1',
) => ({
  manager,
  operation,
  apiVersion,
  time: '2021-04-08T10:00:00Z',
  fieldsType: 'FieldsV1',
  fieldsV1,
});
const REPLICAS = { 'f:spec': { 'f:replicas': {} } };

describe('scale managed fields', () => {
  const parent = [
    entry('deployer', 'Apply', { 'f:spec': { 'f:replicas': {}, 'f:paused': {} } }),
    entry('labeler', 'Update', { 'f:metadata': { 'f:labels': { 'f:a': {} } } }),
  ];

  it('shows the owners of replicas to the Scale', () => {
    expect(scaleManagedFields(parent)).toEqual([entry('deployer', 'Apply', REPLICAS, 'autoscaling/v1')]);
    expect(scaleManagedFields(undefined)).toBeUndefined();
    expect(scaleManagedFields('garbage')).toBeUndefined();
  });

  it('gives replicas to the Scale writer and takes it from the others', () => {
    const scale = [entry('hpa', 'Update', REPLICAS, 'autoscaling/v1')];
    expect(parentManagedFields(parent, scale, 'apps/v1')).toEqual([
      entry('deployer', 'Apply', { 'f:spec': { 'f:paused': {} } }),
      entry('hpa', 'Update', REPLICAS),
      entry('labeler', 'Update', { 'f:metadata': { 'f:labels': { 'f:a': {} } } }),
    ]);
  });

  it('keeps the parent as it is when the owner is unchanged, and merges into an existing entry of the writer', () => {
    expect(parentManagedFields(parent, scaleManagedFields(parent), 'apps/v1')).toEqual(parent);
    const scale = [entry('labeler', 'Update', REPLICAS, 'autoscaling/v1')];
    expect(parentManagedFields(parent, scale, 'apps/v1')).toEqual([
      entry('deployer', 'Apply', { 'f:spec': { 'f:paused': {} } }),
      entry('labeler', 'Update', { 'f:metadata': { 'f:labels': { 'f:a': {} } }, ...REPLICAS }),
    ]);
  });

  it('leaves unreadable parent entries alone', () => {
    const bad = [{ manager: 'x', operation: 'Bogus' }];
    expect(parentManagedFields(bad, [], 'apps/v1')).toBe(bad);
  });
});
