import { type ApiObject, builtinScheme, jsonCodec, ProtobufCodec, protoType, WatchEventSchema } from '@platform/api';

import { deepFreeze, isImmutable } from '../../storage/immutable';
import { encodeJson, encodeJsonWatchEvent, encodeProtobuf, encodeProtobufWatchEvent } from './encode-cache';

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
});
