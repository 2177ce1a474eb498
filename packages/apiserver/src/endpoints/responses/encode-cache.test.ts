import { type ApiObject, builtinScheme, jsonCodec, ProtobufCodec, protoType, WatchEventSchema } from '@platform/api';

import { deepFreeze, isImmutable } from '../../storage/immutable';
import {
  encodeJson,
  encodeJsonWatchEvent,
  encodeProtobuf,
  encodeProtobufWatchEvent,
  jsonArrayParts,
  protobufListParts,
} from './encode-cache';

function configMap(name: string, extra: Record<string, string> = {}): ApiObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'ns', resourceVersion: '7', labels: { 'app.x/y': 'é "quoted" ✓' } },
    data: { a: 'line\nbreak', ...extra },
  } as ApiObject;
}

describe('encode cache', () => {
  it('marks what deepFreeze froze, objects and nested values alike frozen', () => {
    const obj = deepFreeze(configMap('a'));
    expect(isImmutable(obj)).toBe(true);
    expect(Object.isFrozen(obj.metadata)).toBe(true);
    expect(isImmutable(configMap('b'))).toBe(false);
    expect(isImmutable(Object.freeze(configMap('c')))).toBe(false);
  });

  it('encodes immutable objects exactly as the JSON codec, once', () => {
    const obj = deepFreeze(configMap('a'));
    const first = encodeJson(obj);
    expect(first.equals(jsonCodec.encode(obj))).toBe(true);
    expect(encodeJson(obj)).toBe(first);
    const mutable = configMap('b');
    expect(encodeJson(mutable).equals(jsonCodec.encode(mutable))).toBe(true);
  });

  it('encodes lists of cached, uncached and no items exactly as the JSON codec', () => {
    const items = [deepFreeze(configMap('a')), configMap('b'), deepFreeze(configMap('c', { k: '"items"' }))];
    const list = {
      apiVersion: 'v1',
      kind: 'ConfigMapList',
      metadata: { resourceVersion: '9', continue: 'abc' },
      items,
    } as unknown as ApiObject;
    expect(encodeJson(list).toString()).toBe(jsonCodec.encode(list).toString());
    const empty = { apiVersion: 'v1', kind: 'ConfigMapList', metadata: {}, items: [] } as unknown as ApiObject;
    expect(encodeJson(empty).toString()).toBe(jsonCodec.encode(empty).toString());
    const itemsFirst = { items: [items[0]], kind: 'ConfigMapList', apiVersion: 'v1' } as unknown as ApiObject;
    expect(encodeJson(itemsFirst).toString()).toBe(jsonCodec.encode(itemsFirst).toString());
  });

  it('encodes a frozen items array once, in chunks shared by every list that carries it', () => {
    const items = deepFreeze(Array.from({ length: 300 }, (_, i) => configMap(`cm-${i}`, { pad: 'x'.repeat(500) })));
    const list = (rv: string): ApiObject =>
      ({ apiVersion: 'v1', kind: 'ConfigMapList', metadata: { resourceVersion: rv }, items }) as unknown as ApiObject;
    const a = jsonArrayParts(list('9'), 'items')!;
    const b = jsonArrayParts(list('10'), 'items')!;
    const partsA = [...a.parts];
    const partsB = [...b.parts];
    expect(Buffer.concat(partsA).toString()).toBe(jsonCodec.encode(list('9')).toString());
    expect(Buffer.concat(partsB).toString()).toBe(jsonCodec.encode(list('10')).toString());
    expect(a.length).toBe(Buffer.concat(partsA).length);
    // The items' bytes: a few buffers of about 64 KiB (not one per item), the same ones for both lists.
    expect(partsA.length).toBeLessThan(8);
    expect(partsA.slice(1, -1)).toHaveLength(partsB.length - 2);
    partsA.slice(1, -1).forEach((p, i) => expect(p).toBe(partsB[i + 1]));
    expect(encodeJson(list('11')).toString()).toBe(jsonCodec.encode(list('11')).toString());
  });

  it("shares one JSON frame among the watchers of a cached object's event, one per event type", () => {
    const obj = deepFreeze(configMap('a'));
    const modified = encodeJsonWatchEvent('MODIFIED', obj);
    expect(encodeJsonWatchEvent('MODIFIED', obj)).toBe(modified);
    expect(modified.toString()).toBe(`${JSON.stringify({ type: 'MODIFIED', object: obj })}\n`);
    expect(JSON.parse(modified.toString('utf8'))).toEqual({ type: 'MODIFIED', object: obj });
    const deleted = encodeJsonWatchEvent('DELETED', obj);
    expect(JSON.parse(deleted.toString('utf8'))).toEqual({ type: 'DELETED', object: obj });
    expect(encodeJsonWatchEvent('DELETED', obj)).toBe(deleted);
    expect(encodeJsonWatchEvent('MODIFIED', obj)).toBe(modified);
    // An object that may still change is encoded at each event.
    const mutable = configMap('b', { k: 'v' });
    expect(JSON.parse(encodeJsonWatchEvent('ADDED', mutable).toString('utf8')).object.data.k).toBe('v');
    (mutable as unknown as { data: Record<string, string> }).data.k = 'w';
    expect(JSON.parse(encodeJsonWatchEvent('ADDED', mutable).toString('utf8')).object.data.k).toBe('w');
  });

  it('encodes watch events as one JSON line', () => {
    for (const obj of [deepFreeze(configMap('a')), configMap('b')]) {
      expect(encodeJsonWatchEvent('MODIFIED', obj).toString()).toBe(
        `${JSON.stringify({ type: 'MODIFIED', object: obj })}\n`,
      );
    }
  });

  it('encodes Protobuf exactly as the codec, once per codec and object', () => {
    const codec = new ProtobufCodec(builtinScheme());
    const obj = deepFreeze(configMap('a'));
    const first = encodeProtobuf(codec, obj);
    expect(first.equals(codec.encode(obj))).toBe(true);
    expect(encodeProtobuf(codec, obj)).toBe(first);
    expect(encodeProtobuf(new ProtobufCodec(builtinScheme()), obj)).not.toBe(first);
  });

  it('frames Protobuf watch events as a length and a WatchEvent, once per object and event type', () => {
    const codec = new ProtobufCodec(builtinScheme());
    const obj = deepFreeze(configMap('a'));
    const frame = encodeProtobufWatchEvent(codec, 'ADDED', obj);
    const decoded = protoType(WatchEventSchema.$id as string).decode(frame.subarray(4)) as unknown as {
      type: string;
      object: { raw: Uint8Array };
    };
    expect(frame.readUInt32BE(0)).toBe(frame.length - 4);
    expect(decoded.type).toBe('ADDED');
    expect(Buffer.from(decoded.object.raw).equals(codec.encode(obj))).toBe(true);
    expect(encodeProtobufWatchEvent(codec, 'ADDED', obj)).toBe(frame);
    expect(encodeProtobufWatchEvent(codec, 'MODIFIED', obj).subarray(4)).not.toEqual(frame.subarray(4));
    const mutable = configMap('b');
    expect(encodeProtobufWatchEvent(codec, 'ADDED', mutable)).not.toBe(
      encodeProtobufWatchEvent(codec, 'ADDED', mutable),
    );
  });

  it('splits lists and Tables into parts that join to the bytes of the JSON codec, with the length when all are cached', () => {
    const frozen = [deepFreeze(configMap('a')), deepFreeze(configMap('c', { k: '"items"' }))];
    const mixed = [frozen[0]!, configMap('b'), frozen[1]!];
    const meta = { resourceVersion: '9', continue: 'abc', remainingItemCount: 3 };
    for (const items of [frozen, mixed, []]) {
      const list = { apiVersion: 'v1', kind: 'ConfigMapList', metadata: meta, items } as unknown as ApiObject;
      const body = jsonArrayParts(list, 'items')!;
      const expected = jsonCodec.encode(list);
      const joined = Buffer.concat([...body.parts]);
      expect(joined.toString()).toBe(expected.toString());
      expect(body.length).toBe(items.includes(mixed[1]!) ? undefined : expected.length);
    }
    const table = {
      apiVersion: 'meta.platform/v1',
      kind: 'Table',
      columnDefinitions: [{ name: 'Name', type: 'string' }],
      rows: [{ cells: ['a'], object: frozen[0] }, { cells: ['b'] }],
      metadata: { resourceVersion: '9' },
    };
    expect(Buffer.concat([...jsonArrayParts(table, 'rows')!.parts]).toString()).toBe(JSON.stringify(table));
    expect(jsonArrayParts({ items: [1, 2] }, 'items')).toBeUndefined();
    expect(jsonArrayParts({ kind: 'Status' }, 'items')).toBeUndefined();
  });

  it('splits Protobuf lists into parts that join to the bytes of the codec, long lengths included', () => {
    const codec = new ProtobufCodec(builtinScheme());
    // Items of 100 bytes to 100 KiB: one-, two- and three-byte length varints, and a list length of three or more.
    const sizes = [100, 200, 20_000, 100_000, 5];
    const frozen = sizes.map((n, i) => deepFreeze(configMap(`cm-${i}`, { big: 'y'.repeat(n) })));
    const mixed = [frozen[0]!, configMap('m', { big: 'z'.repeat(300) }), ...frozen.slice(1)];
    for (const items of [frozen, mixed]) {
      const list = {
        apiVersion: 'v1',
        kind: 'ConfigMapList',
        metadata: { resourceVersion: '9', continue: 'abc', remainingItemCount: 3 },
        items,
      } as unknown as ApiObject;
      const body = protobufListParts(codec, list)!;
      const expected = codec.encode(list);
      const joined = Buffer.concat([...body.parts]);
      expect(joined.equals(expected)).toBe(true);
      expect(body.length).toBe(expected.length);
    }
    const empty = { apiVersion: 'v1', kind: 'ConfigMapList', metadata: {}, items: [] } as unknown as ApiObject;
    expect(protobufListParts(codec, empty)).toBeUndefined();
  });

  it('encodes a frozen items array once per codec for every Protobuf list that carries it', () => {
    const codec = new ProtobufCodec(builtinScheme());
    const sizes = [100, 200, 20_000, 100_000, 5, ...Array.from({ length: 200 }, () => 600)];
    const items = deepFreeze(sizes.map((n, i) => configMap(`cm-${i}`, { big: 'y'.repeat(n) })));
    const list = (rv: string): ApiObject =>
      ({ apiVersion: 'v1', kind: 'ConfigMapList', metadata: { resourceVersion: rv }, items }) as unknown as ApiObject;
    const a = protobufListParts(codec, list('9'))!;
    const b = protobufListParts(codec, list('10000'))!;
    const partsA = [...a.parts];
    const partsB = [...b.parts];
    for (const [parts, body, rv] of [
      [partsA, a, '9'],
      [partsB, b, '10000'],
    ] as const) {
      const expected = codec.encode(list(rv));
      expect(Buffer.concat(parts).equals(expected)).toBe(true);
      expect(body.length).toBe(expected.length);
    }
    // The items' bytes: a few chunks (not two parts per item), the same ones for both lists.
    expect(partsA.length).toBeLessThan(8);
    expect(partsA.slice(1)).toHaveLength(partsB.length - 1);
    partsA.slice(1).forEach((p, i) => expect(p).toBe(partsB[i + 1]));
  });
});
