import { builtinScheme, ProtobufCodec, protoType, WatchEventSchema } from '@platform/api';

import { isWatchDecodeError, JsonWatchDecoder, ProtobufWatchDecoder } from './decoder';

const cm = (name: string, rv: string): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'default', resourceVersion: rv },
  data: { k: 'v' },
});

describe('JsonWatchDecoder', () => {
  it('decodes frames split and joined at any byte', () => {
    const text = [
      JSON.stringify({ type: 'ADDED', object: cm('a', '1') }),
      JSON.stringify({ type: 'MODIFIED', object: cm('a', '2') }),
      JSON.stringify({
        type: 'BOOKMARK',
        object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: '9' } },
      }),
      '',
    ].join('\n');
    const bytes = Buffer.from(text);
    for (const step of [1, 7, 64, bytes.length]) {
      const d = new JsonWatchDecoder();
      const out = [];
      for (let i = 0; i < bytes.length; i += step) out.push(...d.push(bytes.subarray(i, i + step)));
      expect(out.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'BOOKMARK']);
      expect(d.pending).toBe(0);
    }
  });

  it('rejects malformed frames with a typed error', () => {
    for (const bad of ['{nope}\n', '{"type":"EXPLODED","object":{}}\n', '{"type":"ADDED"}\n']) {
      let err: unknown;
      try {
        new JsonWatchDecoder().push(Buffer.from(bad));
      } catch (e) {
        err = e;
      }
      expect(isWatchDecodeError(err)).toBe(true);
    }
  });
});

describe('ProtobufWatchDecoder', () => {
  const codec = new ProtobufCodec(builtinScheme());
  const frame = (type: string, obj: Record<string, unknown>): Buffer => {
    const msg = protoType(WatchEventSchema.$id as string)
      .encode({ type, object: { raw: codec.encode(obj) } })
      .finish();
    const head = Buffer.alloc(4);
    head.writeUInt32BE(msg.length, 0);
    return Buffer.concat([head, msg]);
  };

  it('decodes length-prefixed events split at any byte', () => {
    const bytes = Buffer.concat([frame('ADDED', cm('a', '1')), frame('DELETED', cm('a', '2'))]);
    for (const step of [1, 3, 50, bytes.length]) {
      const d = new ProtobufWatchDecoder(codec);
      const out = [];
      for (let i = 0; i < bytes.length; i += step) out.push(...d.push(bytes.subarray(i, i + step)));
      expect(out.map((e) => [e.type, e.object.metadata?.resourceVersion])).toEqual([
        ['ADDED', '1'],
        ['DELETED', '2'],
      ]);
      expect((out[0]?.object as { data?: unknown }).data).toEqual({ k: 'v' });
    }
  });

  it('keeps a partial frame pending and refuses absurd lengths', () => {
    const d = new ProtobufWatchDecoder(codec);
    const f = frame('ADDED', cm('a', '1'));
    expect(d.push(f.subarray(0, 10))).toEqual([]);
    expect(d.pending).toBe(10);
    const huge = Buffer.alloc(4);
    huge.writeUInt32BE(0xffffffff, 0);
    expect(() => new ProtobufWatchDecoder(codec).push(huge)).toThrow(/exceeds the maximum size/);
  });
});
