import { ConfigMapSchema } from '../kinds/core/v1/config-map';
import { DeleteOptionsSchema, ObjectMetaSchema } from '../meta/v1/types';
import { decodeInto } from './decode';

const CM = ConfigMapSchema.$id as string;

describe('decodeInto', () => {
  it('accepts a valid object unchanged', () => {
    const input = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'a', labels: { x: 'y' } },
      data: { k: 'v' },
    };
    expect(decodeInto(CM, structuredClone(input))).toEqual({ ok: true, value: input });
  });

  it('drops unknown fields at every level, as Kubernetes 1.21 does', () => {
    const r = decodeInto(CM, { kind: 'ConfigMap', bogus: 1, metadata: { name: 'a', nope: true }, data: { k: 'v' } });
    expect(r).toEqual({ ok: true, value: { kind: 'ConfigMap', metadata: { name: 'a' }, data: { k: 'v' } } });
  });

  it('reads null as unset (kubectl writes creationTimestamp: null)', () => {
    const r = decodeInto(CM, { metadata: { name: 'a', creationTimestamp: null, labels: null }, data: null });
    expect(r).toEqual({ ok: true, value: { metadata: { name: 'a' } } });
  });

  it('reports every type error with its field path', () => {
    const r = decodeInto(CM, {
      metadata: { name: 5, labels: { a: 1 }, ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'n' }] },
      data: 'x',
    });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.errors).toEqual(
      expect.arrayContaining([
        'metadata.name: must be string',
        'metadata.labels.a: must be string',
        "metadata.ownerReferences[0]: must have required property 'uid'",
        'data: must be object',
      ]),
    );
  });

  it('checks formats: times, base64, integer ranges', () => {
    const r = decodeInto(ObjectMetaSchema.$id as string, { creationTimestamp: 'yesterday', generation: 1.5 });
    expect(!r.ok && r.errors).toEqual(
      expect.arrayContaining([
        'creationTimestamp: must be an RFC 3339 time (e.g. "2021-01-01T00:00:00Z")',
        'generation: must be integer',
      ]),
    );
    const b = decodeInto(CM, { binaryData: { f: 'not base64!' } });
    expect(!b.ok && b.errors).toEqual(['binaryData.f: must be base64-encoded data']);
  });

  it('names the allowed values of an enum', () => {
    const r = decodeInto(DeleteOptionsSchema.$id as string, { propagationPolicy: 'Sideways' });
    expect(!r.ok && r.errors).toEqual(['propagationPolicy: must be one of "Orphan", "Background", "Foreground"']);
  });

  it.each([[null], [[]], ['text'], [3]])('rejects a non-object input %p', (input) => {
    const r = decodeInto(CM, input);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.errors[0]).toMatch(/^expected a JSON object/);
  });
});
