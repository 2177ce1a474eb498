import { ConfigMapKind } from '../kinds/core/v1/config-map';
import { humanDuration, tableColumns, toTable } from './table';

const NOW = Date.parse('2021-04-08T12:00:00Z');

describe('humanDuration (as kubectl prints ages)', () => {
  it.each([
    [-5000, '<invalid>'],
    [-1000, '0s'],
    [0, '0s'],
    [45_000, '45s'],
    [119_000, '119s'],
    [120_000, '2m'],
    [303_000, '5m3s'],
    [15 * 60_000, '15m'],
    [179 * 60_000, '179m'],
    [3 * 3600_000, '3h'],
    [5 * 3600_000 + 20 * 60_000, '5h20m'],
    [30 * 3600_000, '30h'],
    [50 * 3600_000, '2d2h'],
    [10 * 86400_000, '10d'],
    [800 * 86400_000, '2y70d'],
    [3650 * 86400_000, '10y'],
  ])('%d ms -> %s', (ms, text) => {
    expect(humanDuration(ms)).toBe(text);
  });
});

describe('toTable', () => {
  const cm = { metadata: { name: 'a', creationTimestamp: '2021-04-08T11:55:00Z' }, data: { x: '1', y: '2' } };

  it('uses the default Name and Created At columns when a kind has none', () => {
    const t = toTable(tableColumns(undefined), [cm], { now: NOW, includeObject: 'None' });
    expect(t.columnDefinitions.map((c) => [c.name, c.type])).toEqual([
      ['Name', 'string'],
      ['Created At', 'date'],
    ]);
    expect(t.rows).toEqual([{ cells: ['a', '2021-04-08T11:55:00Z'] }]);
  });

  it('uses the kind columns, with metadata objects by default', () => {
    const t = toTable(tableColumns(ConfigMapKind.spec.columns), [cm], { now: NOW });
    expect(t).toMatchObject({ kind: 'Table', apiVersion: 'meta.platform/v1beta1' });
    expect(t.columnDefinitions.map((c) => c.name)).toEqual(['Name', 'Data', 'Age']);
    expect(t.rows[0]).toEqual({
      cells: ['a', 2, '5m'],
      object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.platform/v1', metadata: cm.metadata },
    });
  });
});
