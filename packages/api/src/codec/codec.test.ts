import { LeaseSpecSchema } from '../kinds/coordination/v1/lease';
import { type ConfigMap, ConfigMapKind } from '../kinds/core/v1/config-map';
import { type ObjectMeta, ObjectMetaSchema, type Status, StatusSchema } from '../meta/v1/types';
import { fromProto, protoType, toProto, unknownType } from '../schema/protobuf';
import { object, opt, t } from '../schema/schema';
import { builtinScheme } from '../kinds';
import { Scheme } from '../scheme/scheme';
import { isCodecError, jsonCodec, PROTOBUF_MAGIC, ProtobufCodec } from './codec';

const scheme = new Scheme().add(ConfigMapKind);
const codec = new ProtobufCodec(scheme);

function roundTrip<T extends object>(id: string, value: T): T {
  const type = protoType(id);
  const bytes = type.encode(toProto(id, value as Record<string, unknown>)).finish();
  return fromProto(id, type.decode(bytes) as unknown as Record<string, unknown>) as T;
}

describe('Protobuf round trip', () => {
  it('keeps every field of ObjectMeta', () => {
    const meta: ObjectMeta = {
      name: 'web-0',
      generateName: 'web-',
      namespace: 'default',
      uid: '6b1f1b9e-0000-4000-8000-000000000001',
      resourceVersion: '12345',
      generation: 3,
      creationTimestamp: '2021-04-08T12:00:01Z',
      deletionTimestamp: '2021-04-08T12:05:00Z',
      deletionGracePeriodSeconds: 0,
      labels: { app: 'web', tier: 'frontend' },
      annotations: { 'example.com/note': 'a "quoted" value' },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: 'web',
          uid: 'u-1',
          controller: true,
          blockOwnerDeletion: false,
        },
      ],
      finalizers: ['foregroundDeletion', 'example.com/cleanup'],
      managedFields: [
        {
          manager: 'kubectl',
          operation: 'Apply',
          apiVersion: 'v1',
          time: '2021-04-08T12:00:01Z',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:metadata': { 'f:labels': { 'f:app': {} } } },
        },
      ],
    };
    expect(roundTrip(ObjectMetaSchema.$id as string, meta)).toEqual(meta);
  });

  it('keeps every field of Status, including causes', () => {
    const status: Status = {
      metadata: { resourceVersion: '7' },
      status: 'Failure',
      message: 'Pod "x" is invalid: metadata.name: Required value',
      reason: 'Invalid',
      details: {
        name: 'x',
        group: '',
        kind: 'Pod',
        uid: 'u',
        causes: [{ reason: 'FieldValueRequired', message: 'Required value', field: 'metadata.name' }],
        retryAfterSeconds: 2,
      },
      code: 422,
    };
    const back = roundTrip(StatusSchema.$id as string, status);
    // `group: ''` is a non-pointer zero value: dropped on the way back, as Go's omitempty would.
    expect(back).toEqual({ ...status, details: { ...status.details, group: undefined } });
    expect(back.details).not.toHaveProperty('group');
  });

  it('writes Kubernetes field numbers and wire types', () => {
    const type = protoType(ObjectMetaSchema.$id as string);
    // name = 1 (length-delimited): 0x0a, len 1, 'x'
    expect(Buffer.from(type.encode(toProto(ObjectMetaSchema.$id as string, { name: 'x' })).finish())).toEqual(
      Buffer.from([0x0a, 0x01, 0x78]),
    );
    // generation = 7 (varint): 0x38, 5
    expect(Buffer.from(type.encode(toProto(ObjectMetaSchema.$id as string, { generation: 5 })).finish())).toEqual(
      Buffer.from([0x38, 0x05]),
    );
    // creationTimestamp = 8, a Time message {seconds = 1}: 0x42 len 0x08 seconds
    const ts = Buffer.from(
      type.encode(toProto(ObjectMetaSchema.$id as string, { creationTimestamp: '1970-01-01T00:00:10Z' })).finish(),
    );
    expect(ts).toEqual(Buffer.from([0x42, 0x02, 0x08, 0x0a]));
    // labels = 11, a map entry {key = 1, value = 2}: 0x5a len 0x0a 'a' 0x12 'b'
    expect(Buffer.from(type.encode(toProto(ObjectMetaSchema.$id as string, { labels: { a: 'b' } })).finish())).toEqual(
      Buffer.from([0x5a, 0x06, 0x0a, 0x01, 0x61, 0x12, 0x01, 0x62]),
    );
  });

  it('reads what a Go client writes: zero values of non-pointer fields and the zero time are unset', () => {
    const type = protoType(ObjectMetaSchema.$id as string);
    // Go writes name, generateName, namespace ... even when empty, and creationTimestamp as year 1.
    const goBytes = type
      .encode({
        name: 'x',
        generateName: '',
        namespace: '',
        generation: 0,
        creationTimestamp: { seconds: -62135596800, nanos: 0 },
      })
      .finish();
    expect(
      fromProto(ObjectMetaSchema.$id as string, type.decode(goBytes) as unknown as Record<string, unknown>),
    ).toEqual({
      name: 'x',
    });
  });

  it('keeps a zero pointer value (deletionGracePeriodSeconds: 0 means now)', () => {
    expect(roundTrip(ObjectMetaSchema.$id as string, { deletionGracePeriodSeconds: 0 })).toEqual({
      deletionGracePeriodSeconds: 0,
    });
  });
});

describe('times on the wire', () => {
  // Conversions remember the last time each way: alternating values must not read one for the other.
  it('round-trips times and micro times, alternating within one second and across seconds', () => {
    const id = LeaseSpecSchema.$id as string;
    const times = [
      '2021-04-08T12:00:10.123456Z',
      '2021-04-08T12:00:10.654321Z',
      '2021-04-08T12:00:10.123456Z',
      '2021-04-08T12:00:11.000001Z',
      '2021-04-08T12:00:10.000000Z',
      '1970-01-01T00:00:00.000010Z',
    ];
    for (const [i, renewTime] of times.entries()) {
      const acquireTime = times[times.length - 1 - i]!;
      expect(roundTrip(id, { renewTime, acquireTime })).toEqual({ renewTime, acquireTime });
    }
    for (const creationTimestamp of ['2021-04-08T12:00:01Z', '2021-04-08T12:00:02Z', '2021-04-08T12:00:01Z']) {
      expect(roundTrip(ObjectMetaSchema.$id as string, { creationTimestamp })).toEqual({ creationTimestamp });
    }
  });
});

describe('ProtobufCodec', () => {
  const cm: ConfigMap = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'settings', namespace: 'default', labels: { app: 'web' } },
    data: { 'app.properties': 'a=1\nb=2\n' },
    binaryData: { 'logo.png': Buffer.from([0, 1, 2, 255]).toString('base64') },
    immutable: false,
  };

  it('wraps objects in the k8s\\0 envelope and reads them back', () => {
    const bytes = codec.encode(cm);
    expect(bytes.subarray(0, 4)).toEqual(PROTOBUF_MAGIC);
    expect(codec.decode(bytes)).toEqual(cm);
  });

  it('writes only what it reads back: encoding a decoded object gives its bytes again', () => {
    const cm = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'c',
        namespace: '',
        generation: 0,
        labels: {},
        finalizers: [],
        managedFields: [
          {
            manager: '',
            operation: 'Update',
            apiVersion: 'v1',
            time: '2021-04-08T12:00:01Z',
            fieldsType: 'FieldsV1',
            fieldsV1: { 'f:data': {} },
          },
        ],
      },
      data: { a: '' },
    } as ConfigMap;
    const bytes = codec.encode(cm);
    const decoded = codec.decode(bytes);
    expect(decoded.metadata).toEqual({
      name: 'c',
      managedFields: [
        {
          operation: 'Update',
          apiVersion: 'v1',
          time: '2021-04-08T12:00:01Z',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:data': {} },
        },
      ],
    });
    expect(Buffer.from(codec.encode(decoded)).equals(Buffer.from(bytes))).toBe(true);
  });

  it('encodes lists with their items', () => {
    const list = {
      apiVersion: 'v1',
      kind: 'ConfigMapList',
      metadata: { resourceVersion: '10', continue: 'abc' },
      items: [{ metadata: cm.metadata, data: cm.data }],
    };
    expect(codec.decode(codec.encode(list as never))).toEqual(list);
  });

  it("reads and writes a group in Kubernetes' spelling (.k8s.io) as the platform's, keeping the spelling", () => {
    const lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'n1', namespace: 'node-lease' },
      spec: { holderIdentity: 'n1', leaseDurationSeconds: 40 },
    };
    const full = new ProtobufCodec(builtinScheme());
    const bytes = full.encode(lease as never);
    expect(bytes.includes(Buffer.from('coordination.k8s.io/v1'))).toBe(true);
    expect(full.decode(bytes)).toEqual(lease);
    expect(() => full.encode({ ...lease, apiVersion: 'coordination.example.io/v1' } as never)).toThrow(
      /no Protobuf type/,
    );
  });

  it('encodes Status in any apiVersion', () => {
    const status = { apiVersion: 'v1', kind: 'Status', status: 'Failure', code: 404, reason: 'NotFound', message: 'x' };
    expect(codec.decode(codec.encode(status as never))).toEqual({ ...status, metadata: undefined });
  });

  it.each([
    ['no magic', Buffer.from('{"kind":"ConfigMap"}'), /envelope prefix/],
    [
      'a truncated envelope',
      Buffer.concat([PROTOBUF_MAGIC, Buffer.from([0x0a, 0x40, 0x01])]),
      /malformed Protobuf envelope/,
    ],
    [
      'an unknown kind',
      Buffer.concat([
        PROTOBUF_MAGIC,
        unknownType()
          .encode({ typeMeta: { apiVersion: 'v1', kind: 'Nope' } })
          .finish(),
      ]),
      /no Protobuf type for kind "Nope"/,
    ],
    [
      'a content encoding',
      Buffer.concat([
        PROTOBUF_MAGIC,
        unknownType()
          .encode({ typeMeta: { apiVersion: 'v1', kind: 'ConfigMap' }, contentEncoding: 'gzip' })
          .finish(),
      ]),
      /unsupported content encoding "gzip"/,
    ],
  ])('rejects %s with a CodecError', (_what, data, message) => {
    let err: unknown;
    try {
      codec.decode(data);
    } catch (e) {
      err = e;
    }
    expect(isCodecError(err)).toBe(true);
    expect((err as Error).message).toMatch(message);
  });
});

describe('jsonCodec', () => {
  it('round-trips', () => {
    const obj = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { k: 'v' } };
    expect(jsonCodec.decode(jsonCodec.encode(obj))).toEqual(obj);
  });

  it.each([['{'], ['[]'], ['null'], ['"x"']])('rejects %s', (text) => {
    expect(() => jsonCodec.decode(Buffer.from(text))).toThrow(/invalid JSON/);
  });
});

describe('metav1.Duration on the wire', () => {
  const DurationHolder = object('io.platform.test.v1.DurationHolder', { d: opt(1, t.duration()) });
  const id = DurationHolder.$id as string;

  it.each([['5m0s'], ['1h30m0s'], ['8760h0m0s'], ['1.5s'], ['0s']])('round-trips %s as nanoseconds', (d) => {
    expect(roundTrip(id, { d })).toEqual({ d });
  });

  it('names a bad duration as Go does', () => {
    expect(() => toProto(id, { d: '5x' })).toThrow('time: unknown unit "x" in duration "5x"');
  });
});
