/**
 * The Protobuf view of the schemas: protobufjs message types built by reflection from the `proto` field numbers
 * of each named schema, and the conversions between an object's JSON form (what every other layer works with)
 * and its Protobuf form.
 *
 * Types are built on first use, for the named schema asked for and everything it references, into one shared
 * `Root`. A schema that cannot be expressed (a property without a field number, an unknown wire form) fails
 * then, naming the field, so a mistake in a kind definition shows up the first time its codec is built (the
 * kind's own round-trip test).
 *
 * Wire forms follow Kubernetes' `generated.proto`: `Time`/`MicroTime` are `{int64 seconds = 1; int32 nanos = 2}`,
 * `Quantity` is `{string string = 1}`, `IntOrString` is `{int64 type = 1; int32 intVal = 2; string strVal = 3}`,
 * `RawExtension` is `{bytes raw = 1}`, `FieldsV1` is `{bytes Raw = 1}`, `Duration` is `{int64 duration = 1}`.
 */
import * as protobuf from 'protobufjs';

import { formatDuration, parseDuration } from '../duration/duration';

import { type AnnotatedSchema, isOptional, resolveRef, type Wire } from './schema';

/** A value in its JSON form, as decoded from untrusted input. */
type Json = unknown;
type ProtoObject = Record<string, unknown>;

const root = new protobuf.Root();
const PKG = 'platform';

function wellKnown(name: string, fields: [string, number, string][]): protobuf.Type {
  const type = new protobuf.Type(name);
  for (const [field, id, kind] of fields) type.add(new protobuf.Field(field, id, kind, 'optional'));
  return type;
}

const wellKnownNs = root.define(`${PKG}.wire`);
wellKnownNs.add(
  wellKnown('Time', [
    ['seconds', 1, 'int64'],
    ['nanos', 2, 'int32'],
  ]),
);
wellKnownNs.add(wellKnown('Quantity', [['string', 1, 'string']]));
wellKnownNs.add(
  wellKnown('IntOrString', [
    ['type', 1, 'int64'],
    ['intVal', 2, 'int32'],
    ['strVal', 3, 'string'],
  ]),
);
wellKnownNs.add(wellKnown('RawExtension', [['raw', 1, 'bytes']]));
wellKnownNs.add(wellKnown('FieldsV1', [['Raw', 1, 'bytes']]));
wellKnownNs.add(wellKnown('Duration', [['duration', 1, 'int64']]));
// A []string value of a map (`map<string, ExtraValue>` in authentication and authorization): Kubernetes wraps it.
wellKnownNs.add(
  (() => {
    const t = new protobuf.Type('StringList');
    t.add(new protobuf.Field('items', 1, 'string', 'repeated'));
    return t;
  })(),
);
wellKnownNs.add(
  (() => {
    const tm = new protobuf.Type('TypeMeta');
    tm.add(new protobuf.Field('apiVersion', 1, 'string', 'optional'));
    tm.add(new protobuf.Field('kind', 2, 'string', 'optional'));
    return tm;
  })(),
);
wellKnownNs.add(
  (() => {
    const u = new protobuf.Type('Unknown');
    u.add(new protobuf.Field('typeMeta', 1, 'TypeMeta', 'optional'));
    u.add(new protobuf.Field('raw', 2, 'bytes', 'optional'));
    u.add(new protobuf.Field('contentEncoding', 3, 'string', 'optional'));
    u.add(new protobuf.Field('contentType', 4, 'string', 'optional'));
    return u;
  })(),
);

const WIRE_MESSAGES: Partial<Record<Wire, string>> = {
  time: 'Time',
  microtime: 'Time',
  quantity: 'Quantity',
  'int-or-string': 'IntOrString',
  raw: 'RawExtension',
  fields: 'FieldsV1',
  duration: 'Duration',
};

/** The Protobuf message name of a named schema (`io.platform.meta.v1.ObjectMeta` → `platform.io_platform_meta_v1_ObjectMeta`). */
function messageName(id: string): string {
  return `${PKG}.${id.replace(/[^A-Za-z0-9]/g, '_')}`;
}

/** The Protobuf scalar or message type of a (non-array, non-map) value schema. */
function valueType(s: AnnotatedSchema, where: string, pending: string[]): string {
  if (s.$ref) {
    pending.push(s.$ref);
    return messageName(s.$ref);
  }
  const wire = s.wire;
  if (wire && WIRE_MESSAGES[wire]) return `${PKG}.wire.${WIRE_MESSAGES[wire]}`;
  if (wire === 'bytes') return 'bytes';
  if (wire === 'int32') return 'int32';
  if (wire === 'int64') return 'int64';
  if (wire === 'double') return 'double';
  if (s.type === 'array') {
    const items = (s as unknown as { items: AnnotatedSchema }).items;
    if (items.type === 'string' && !items.wire) return `${PKG}.wire.StringList`;
  }
  switch (s.type) {
    case 'string':
      return 'string';
    case 'boolean':
      return 'bool';
    case 'integer':
      return 'int64';
    case 'number':
      return 'double';
  }
  throw new Error(`${where}: no Protobuf form for this schema (type ${JSON.stringify(s.type)})`);
}

function build(id: string): protobuf.Type {
  const name = messageName(id);
  const existing = root.lookup(name);
  if (existing) return existing as protobuf.Type;
  const pending: string[] = [];
  const schema = resolveRef(id) as unknown as { properties: Record<string, AnnotatedSchema> };
  const type = new protobuf.Type(name.slice(PKG.length + 1));
  for (const [prop, s] of Object.entries(schema.properties)) {
    const where = `${id}.${prop}`;
    if (s.embeddedIn) {
      const e = s.embeddedIn;
      if (!type.fields[e.field]) {
        pending.push(e.ref);
        type.add(new protobuf.Field(e.field, e.proto, messageName(e.ref), 'optional'));
      }
      continue;
    }
    if (s.proto === 0) continue; // JSON only: apiVersion/kind travel in the envelope
    if (typeof s.proto !== 'number') throw new Error(`${where}: no Protobuf field number`);
    if (s.type === 'array' && s.wire === undefined) {
      const items = (s as unknown as { items: AnnotatedSchema }).items;
      type.add(new protobuf.Field(prop, s.proto, valueType(items, `${where}[]`, pending), 'repeated'));
    } else if (s.wire === 'map') {
      const value = (s as unknown as { additionalProperties: AnnotatedSchema }).additionalProperties;
      type.add(new protobuf.MapField(prop, s.proto, 'string', valueType(value, `${where}{}`, pending)));
    } else {
      type.add(new protobuf.Field(prop, s.proto, valueType(s, where, pending), 'optional'));
    }
  }
  root.define(PKG).add(type);
  for (const dep of pending) build(dep);
  return type;
}

const builtTypes = new Map<string, protobuf.Type>();

/**
 * The protobufjs message type of a named schema, built (with everything it references) on first use; later calls
 * are a map lookup (resolving the whole root again cost ~9 us, and watch streams ask for `WatchEvent` per event).
 */
export function protoType(id: string): protobuf.Type {
  let type = builtTypes.get(id);
  if (type === undefined) {
    type = build(id);
    root.resolveAll();
    builtTypes.set(id, type);
  }
  return type;
}

/** The envelope message `Unknown` of Document 1 ("Protobuf envelope"). */
export function unknownType(): protobuf.Type {
  return root.lookupType(`${PKG}.wire.Unknown`);
}

// ---- JSON form -> Protobuf form -------------------------------------------------------------------------------

const NANOS_PER_MS = 1_000_000;

/**
 * The last time converted each way: an object's timestamps are mostly one second (creation, managed fields), and so
 * are the objects written within it, so most conversions repeat the one before (parsing dates was 2% of a create).
 */
let lastToProto = { text: '', seconds: 0, nanos: 0 };
let lastFromProto = { seconds: NaN, iso: '' };

function timeToProto(v: string): ProtoObject {
  let t = lastToProto;
  if (t.text !== v) {
    const ms = Date.parse(v);
    if (Number.isNaN(ms)) throw new Error(`invalid time ${JSON.stringify(v)}`);
    const seconds = Math.floor(ms / 1000);
    // Sub-millisecond digits (MicroTime) are kept from the text, since Date only has milliseconds.
    const frac = /\.(\d+)/.exec(v)?.[1] ?? '';
    const nanos = frac ? Number(frac.padEnd(9, '0').slice(0, 9)) : (ms - seconds * 1000) * NANOS_PER_MS;
    t = lastToProto = { text: v, seconds, nanos };
  }
  return t.nanos ? { seconds: t.seconds, nanos: t.nanos } : { seconds: t.seconds };
}

/** Converts one value of a (non-array, non-map) property schema; chosen once per schema node, not per value. */
type Converter = (v: never) => unknown;

const identity: Converter = (v) => v;

function valueToProtoFn(s: AnnotatedSchema): Converter {
  const ref = s.$ref;
  if (ref) return (v: ProtoObject) => toProto(ref, v);
  switch (s.wire) {
    case 'time':
    case 'microtime':
      return timeToProto;
    case 'quantity':
      return (v: Json) => ({ string: String(v) });
    case 'int-or-string':
      return (v: Json) => (typeof v === 'number' ? { type: 0, intVal: v } : { type: 1, strVal: v });
    case 'raw':
      return (v: Json) => ({ raw: Buffer.from(JSON.stringify(v)) });
    case 'fields':
      return (v: Json) => ({ Raw: Buffer.from(JSON.stringify(v)) });
    case 'bytes':
      return (v: string) => Buffer.from(v, 'base64');
    case 'duration':
      return (v: string) => ({ duration: Number(parseDuration(v)) });
    default:
      return s.type === 'array' ? (v: Json) => ({ items: v }) : identity;
  }
}

/**
 * How toProto handles one property of a named schema: `skip` (no such property, JSON only, or no schema), the
 * embedded message field it goes into, or the conversion of its value (array items and map values one by one).
 */
type ToPlan =
  | { mode: 'skip' }
  | { mode: 'embedded'; field: string; ref: string }
  | { mode: 'array' | 'map'; convert: Converter }
  | { mode: 'value'; convert: Converter; dropZero: boolean; time: boolean };

function toPlanOf(s: AnnotatedSchema | undefined): ToPlan {
  if (!s || s.proto === 0) return { mode: 'skip' };
  if (s.embeddedIn) return { mode: 'embedded', field: s.embeddedIn.field, ref: s.embeddedIn.ref };
  if (s.type === 'array' && s.wire === undefined) {
    return { mode: 'array', convert: valueToProtoFn((s as unknown as { items: AnnotatedSchema }).items) };
  }
  if (s.wire === 'map') {
    const value = (s as unknown as { additionalProperties: AnnotatedSchema }).additionalProperties;
    return { mode: 'map', convert: valueToProtoFn(value) };
  }
  const time = s.wire === 'time' || s.wire === 'microtime';
  return { mode: 'value', convert: valueToProtoFn(s), dropZero: !s.ptr && isOptional(s), time };
}

/**
 * The plans of a named schema's properties, built on first use of each property (objects are converted several
 * times per request, and looking at the schema node each time was a visible share of a pod create's CPU).
 */
interface SchemaPlans<P> {
  properties: Record<string, AnnotatedSchema>;
  plans: Map<string, P>;
}

function plansOf<P>(cache: Map<string, SchemaPlans<P>>, id: string): SchemaPlans<P> {
  let p = cache.get(id);
  if (!p) {
    const schema = resolveRef(id) as unknown as { properties: Record<string, AnnotatedSchema> };
    p = { properties: schema.properties, plans: new Map() };
    cache.set(id, p);
  }
  return p;
}

/** The plan of `prop`; only the schema's own properties are remembered (input may name anything). */
function planOf<P>(p: SchemaPlans<P>, prop: string, make: (s: AnnotatedSchema | undefined) => P): P {
  let plan = p.plans.get(prop);
  if (plan === undefined) {
    plan = make(p.properties[prop]);
    if (Object.prototype.hasOwnProperty.call(p.properties, prop)) p.plans.set(prop, plan);
  }
  return plan;
}

const toPlans = new Map<string, SchemaPlans<ToPlan>>();

/**
 * Converts an object in its JSON form (already validated against schema `id`) to the plain object protobufjs
 * encodes for that schema's message type. What `fromProto` would drop is not written (empty arrays and maps, zero
 * values of non-pointer fields), so encoding a decoded object gives back the very bytes it was decoded from: a
 * write can tell an unchanged object from the bytes alone.
 */
export function toProto(id: string, obj: ProtoObject): ProtoObject {
  const p = plansOf(toPlans, id);
  const out: ProtoObject = {};
  let embedded: Record<string, { ref: string; obj: ProtoObject }> | undefined;
  for (const prop in obj) {
    if (!Object.prototype.hasOwnProperty.call(obj, prop)) continue;
    const v = obj[prop];
    if (v === undefined || v === null) continue;
    const plan = planOf(p, prop, toPlanOf);
    switch (plan.mode) {
      case 'skip':
        break;
      case 'embedded': {
        embedded ??= {};
        const e = (embedded[plan.field] ??= { ref: plan.ref, obj: {} });
        e.obj[prop] = v;
        break;
      }
      case 'array': {
        const arr = v as never[];
        if (arr.length === 0) break;
        const items = new Array<unknown>(arr.length);
        for (let i = 0; i < arr.length; i++) items[i] = plan.convert(arr[i]!);
        out[prop] = items;
        break;
      }
      case 'map': {
        const src = v as Record<string, never>;
        const keys = Object.keys(src);
        if (keys.length === 0) break;
        const m: ProtoObject = {};
        for (const k of keys) m[k] = plan.convert(src[k]!);
        out[prop] = m;
        break;
      }
      default: {
        const c = plan.convert(v as never);
        if (plan.dropZero && (isZero(c) || (plan.time && isGoZeroTime(c as ProtoObject)))) break;
        out[prop] = c;
      }
    }
  }
  if (embedded)
    for (const field of Object.keys(embedded)) out[field] = toProto(embedded[field]!.ref, embedded[field]!.obj);
  return out;
}

// ---- Protobuf form -> JSON form -------------------------------------------------------------------------------

function num(v: unknown): number {
  if (typeof v === 'number') return v;
  if (v && typeof v === 'object' && 'toNumber' in v) return (v as { toNumber(): number }).toNumber();
  return Number(v);
}

function timeFromProto(v: ProtoObject, micro: boolean): string {
  const seconds = num(v.seconds ?? 0);
  const nanos = num(v.nanos ?? 0);
  if (lastFromProto.seconds !== seconds)
    lastFromProto = { seconds, iso: new Date(seconds * 1000).toISOString().slice(0, 19) };
  const iso = lastFromProto.iso;
  if (!micro) return `${iso}Z`;
  return `${iso}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z`;
}

function isZero(v: unknown): boolean {
  if (v === '' || v === 0 || v === false) return true;
  // int64 values may arrive as Long objects.
  return typeof v === 'object' && v !== null && 'isZero' in v && (v as { isZero(): boolean }).isZero();
}

function valueFromProtoFn(s: AnnotatedSchema): Converter {
  const ref = s.$ref;
  if (ref) return (v: ProtoObject) => fromProto(ref, v);
  switch (s.wire) {
    case 'time':
      return (o: ProtoObject) => timeFromProto(o, false);
    case 'microtime':
      return (o: ProtoObject) => timeFromProto(o, true);
    case 'quantity':
      return (o: ProtoObject) => (o.string as string | undefined) ?? '0';
    case 'int-or-string':
      return (o: ProtoObject) =>
        num(o.type ?? 0) === 1 ? ((o.strVal as string | undefined) ?? '') : num(o.intVal ?? 0);
    case 'raw':
    case 'fields': {
      const field = s.wire === 'raw' ? 'raw' : 'Raw';
      return (o: ProtoObject) => {
        const raw = o[field] as Uint8Array | undefined;
        return raw && raw.length ? (JSON.parse(Buffer.from(raw).toString('utf8')) as Json) : {};
      };
    }
    case 'bytes':
      return (v: Uint8Array) => Buffer.from(v).toString('base64');
    case 'duration':
      return (o: ProtoObject) => formatDuration(BigInt(String(o.duration ?? 0)));
    case 'int64':
    case 'int32':
      return num as Converter;
    default:
      return s.type === 'array' ? (o: ProtoObject) => (o.items as unknown[] | undefined) ?? [] : identity;
  }
}

/**
 * How fromProto handles one field of a decoded message: an embedded message merged into the object, an array or
 * map converted item by item (dropped when empty), or a value (dropped when it is a zero value that `omitempty`
 * would drop: `dropZero`).
 */
type FromPlan =
  | { mode: 'skip' }
  | { mode: 'embedded'; ref: string }
  | { mode: 'array' | 'map'; convert: Converter }
  | { mode: 'value'; convert: Converter; dropZero: boolean; time: boolean };

const fromPlans = new Map<string, SchemaPlans<FromPlan>>();

function fromPlanOf(id: string, p: SchemaPlans<FromPlan>, prop: string): FromPlan {
  return planOf(p, prop, (s) => {
    if (!s) {
      const ref = embeddedFields(id, p.properties)[prop];
      return ref ? { mode: 'embedded', ref } : { mode: 'skip' };
    }
    if (s.type === 'array' && s.wire === undefined) {
      return { mode: 'array', convert: valueFromProtoFn((s as unknown as { items: AnnotatedSchema }).items) };
    }
    if (s.wire === 'map') {
      const value = (s as unknown as { additionalProperties: AnnotatedSchema }).additionalProperties;
      return { mode: 'map', convert: valueFromProtoFn(value) };
    }
    const time = s.wire === 'time' || s.wire === 'microtime';
    return { mode: 'value', convert: valueFromProtoFn(s), dropZero: !s.ptr && isOptional(s), time };
  });
}

/**
 * Converts a decoded protobufjs message of schema `id` back to the object's JSON form. Zero values of
 * non-pointer fields are dropped, as Go's `omitempty` would on the JSON side, so an object encoded by a Go client
 * (which writes every non-pointer field) reads the same as one encoded here.
 */
export function fromProto(id: string, msg: ProtoObject): ProtoObject {
  const p = plansOf(fromPlans, id);
  const out: ProtoObject = {};
  for (const prop of Object.keys(msg)) {
    const v = msg[prop];
    if (v === undefined || v === null) continue;
    const plan = fromPlanOf(id, p, prop);
    switch (plan.mode) {
      case 'skip':
        break;
      case 'embedded':
        Object.assign(out, fromProto(plan.ref, v as ProtoObject));
        break;
      case 'array': {
        const arr = v as never[];
        if (arr.length === 0) break;
        const items = new Array<unknown>(arr.length);
        for (let i = 0; i < arr.length; i++) items[i] = plan.convert(arr[i]!);
        out[prop] = items;
        break;
      }
      case 'map': {
        const src = v as Record<string, never>;
        const keys = Object.keys(src);
        if (keys.length === 0) break;
        const m: ProtoObject = {};
        for (const k of keys) m[k] = plan.convert(src[k]!);
        out[prop] = m;
        break;
      }
      default:
        if (plan.dropZero && (isZero(v) || (plan.time && isGoZeroTime(v as ProtoObject)))) break;
        out[prop] = plan.convert(v as never);
    }
  }
  return out;
}

const embeddedCache = new Map<string, Record<string, string>>();

/** The embedded message fields of a named schema (Protobuf field name → embedded schema id). */
function embeddedFields(id: string, properties: Record<string, AnnotatedSchema>): Record<string, string> {
  let fields = embeddedCache.get(id);
  if (!fields) {
    fields = {};
    for (const s of Object.values(properties)) if (s.embeddedIn) fields[s.embeddedIn.field] = s.embeddedIn.ref;
    embeddedCache.set(id, fields);
  }
  return fields;
}

/** Go's zero `time.Time` (year 1), which Go clients write for an unset non-pointer `metav1.Time`. */
const GO_ZERO_TIME_SECONDS = -62135596800;

function isGoZeroTime(o: ProtoObject): boolean {
  return num(o.seconds ?? 0) === GO_ZERO_TIME_SECONDS && num(o.nanos ?? 0) === 0;
}
