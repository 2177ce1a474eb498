/**
 * The schema vocabulary every API kind is defined with.
 *
 * A kind is written once as a TypeBox schema (a JSON Schema that also yields the TypeScript type). Every other
 * view of the kind is derived from it: validation and defaulting (ajv), the Protobuf descriptor (protobufjs), the
 * OpenAPI v2 definition, strategic-merge-patch metadata. The extra facts those views need travel in a few
 * annotation keywords on the schema nodes:
 *
 * - `proto`: the Protobuf field number of a property (every property of a named object has one, except the
 *   `apiVersion`/`kind` of a top-level kind, which the Protobuf envelope carries instead);
 * - `wire`: how a value is represented on the Protobuf wire when that is not obvious from its JSON type
 *   (`int32`, `int64`, `time`, `microtime`, `quantity`, `int-or-string`, `raw`, `bytes`, `fields`, `duration`, `map`);
 * - `ptr`: the field is a pointer in Kubernetes' Go types, so a zero value on the Protobuf wire is meaningful and
 *   is kept when decoding (non-pointer zero values are dropped, as Go's `omitempty` JSON would);
 * - `patchMergeKey`, `patchStrategy`, `listType`, `listMapKeys`: strategic-merge-patch and list metadata.
 *
 * Nested named types are referenced with {@link ref} (a `$ref` to the named schema's `$id`), never inlined, so that
 * each named type exists exactly once in every derived view.
 */
import {
  Type,
  Kind,
  OptionalKind,
  type SchemaOptions,
  type Static,
  type TObject,
  type TOptional,
  type TProperties,
  type TSchema,
  type TUnsafe,
  type TArray,
  type TBoolean,
  type TInteger,
  type TNumber,
  type TString,
} from '@sinclair/typebox';

/** The wire representations that need more than a JSON type to describe. */
export type Wire =
  | 'int32'
  | 'int64'
  | 'double'
  | 'time'
  | 'microtime'
  | 'quantity'
  | 'int-or-string'
  | 'raw'
  | 'bytes'
  | 'fields'
  | 'duration'
  | 'map';

/** The annotation keywords of this vocabulary, as they appear on schema nodes. */
export interface Annotations {
  proto?: number;
  wire?: Wire;
  ptr?: boolean;
  patchMergeKey?: string;
  patchStrategy?: string;
  listType?: 'atomic' | 'set' | 'map';
  listMapKeys?: string[];
  description?: string;
  /** The property belongs to an embedded Go struct, carried in Protobuf as one nested message field (see {@link embed}). */
  embeddedIn?: EmbeddedIn;
}

/** Where an embedded struct's properties travel in Protobuf: the message field `field` = `proto` of type `ref`. */
export interface EmbeddedIn {
  proto: number;
  field: string;
  ref: string;
}

/** Keywords ajv must accept as annotations (they do not validate anything). */
export const ANNOTATION_KEYWORDS = [
  'proto',
  'wire',
  'ptr',
  'patchMergeKey',
  'patchStrategy',
  'listType',
  'listMapKeys',
  'embeddedIn',
  'gvk',
  'x-kubernetes-int-or-string',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
] as const;

/** A schema node with the annotations of this vocabulary readable on it. */
export type AnnotatedSchema = TSchema & Annotations & { $id?: string; $ref?: string };

const named = new Map<string, TObject>();

/**
 * Defines a named object type (`$id` is its definition name, e.g. `io.platform.api.core.v1.PodSpec`).
 * Unknown properties are dropped when decoding, as Kubernetes 1.21 does. Throws if the name is taken by a
 * different schema, so two kinds can never silently share a definition name.
 */
export function object<P extends TProperties>(id: string, properties: P, options: SchemaOptions = {}): TObject<P> {
  const schema = Type.Object(properties, { ...options, $id: id, additionalProperties: false });
  if (named.has(id)) throw new Error(`schema ${id} is defined twice`);
  named.set(id, schema as unknown as TObject);
  return schema;
}

/** Every named object type defined so far, by `$id`. */
export function namedSchemas(): ReadonlyMap<string, TObject> {
  return named;
}

/** Looks up a named object type; throws naming the reference when it is unknown. */
export function resolveRef(id: string): TObject {
  const s = named.get(id);
  if (!s) throw new Error(`unknown schema reference ${id}`);
  return s;
}

/** A reference to a named type, typed as that type. */
export function ref<T extends TObject>(schema: T, options: Annotations = {}): TUnsafe<Static<T>> {
  if (!schema.$id) throw new Error('ref() needs a named schema (defined with object())');
  return Type.Unsafe<Static<T>>({ ...options, $ref: schema.$id });
}

function annotate<T extends TSchema>(schema: T, a: Annotations): T {
  // Schema nodes built by the helpers below are fresh objects; named schemas are only ever referenced, never
  // annotated in place, so this never changes a shared node.
  if ((schema as AnnotatedSchema).$id) throw new Error(`named schema ${String(schema.$id)} must be used with ref()`);
  return Object.assign(schema, a);
}

/** An optional property with Protobuf field number `proto`. */
export function opt<T extends TSchema>(proto: number, schema: T, description?: string): TOptional<T> {
  return Type.Optional(annotate(schema, description ? { proto, description } : { proto })) as TOptional<T>;
}

/** A required property with Protobuf field number `proto`. */
export function req<T extends TSchema>(proto: number, schema: T, description?: string): T {
  return annotate(schema, description ? { proto, description } : { proto });
}

/**
 * The properties of a named object inlined into a parent (Go's embedded struct, e.g. `VolumeSource` in `Volume`,
 * `Handler` in `Probe`): flat in JSON and OpenAPI, one nested message field in Protobuf (number `proto`, name
 * `field`), as Kubernetes' `generated.proto` has it. Spread the result into the parent's properties. The
 * property nodes are copies, so the embedded type's own schema is never changed.
 */
export function embed<P extends TProperties>(proto: number, field: string, schema: TObject<P>): P {
  if (!schema.$id) throw new Error('embed() needs a named schema (defined with object())');
  const embeddedIn: EmbeddedIn = { proto, field, ref: schema.$id };
  const out: TProperties = {};
  for (const [name, prop] of Object.entries(schema.properties)) out[name] = { ...prop, embeddedIn };
  return out as P;
}

/** Marks a property as a pointer in the Go types (a zero value is meaningful; see the module comment). */
export function ptr<T extends TSchema>(schema: T): T {
  return Object.assign(schema, { ptr: true });
}

/** Scalar and special types. Each call returns a fresh node, so annotations never leak between fields. */
export const t = {
  string: (o: SchemaOptions = {}): TString => Type.String(o),
  bool: (): TBoolean => Type.Boolean(),
  int32: (o: SchemaOptions = {}): TInteger => Type.Integer({ ...o, format: 'int32', wire: 'int32' }),
  int64: (o: SchemaOptions = {}): TInteger => Type.Integer({ ...o, format: 'int64', wire: 'int64' }),
  double: (): TNumber => Type.Number({ format: 'double', wire: 'double' }),
  /** metav1.Time: RFC 3339 in JSON, `{seconds, nanos}` in Protobuf. */
  time: (): TUnsafe<string> => Type.Unsafe<string>({ type: 'string', format: 'date-time', wire: 'time' }),
  /** metav1.MicroTime: RFC 3339 with microseconds. */
  microTime: (): TUnsafe<string> => Type.Unsafe<string>({ type: 'string', format: 'date-time', wire: 'microtime' }),
  /** resource.Quantity: a string (a number is accepted on input and turned into its string). */
  quantity: (): TUnsafe<string> => Type.Unsafe<string>({ type: ['string', 'number'], wire: 'quantity' }),
  /** intstr.IntOrString. */
  intOrString: (): TUnsafe<number | string> =>
    Type.Unsafe<number | string>({
      type: ['integer', 'string'],
      wire: 'int-or-string',
      'x-kubernetes-int-or-string': true,
    }),
  /** runtime.RawExtension: any embedded object. */
  raw: (): TUnsafe<Record<string, unknown>> =>
    Type.Unsafe<Record<string, unknown>>({
      type: 'object',
      wire: 'raw',
      'x-kubernetes-preserve-unknown-fields': true,
      'x-kubernetes-embedded-resource': true,
    }),
  /** []byte: base64 in JSON, bytes in Protobuf. */
  bytes: (): TUnsafe<string> => Type.Unsafe<string>({ type: 'string', format: 'byte', wire: 'bytes' }),
  /** metav1.FieldsV1: a JSON object in JSON, its serialized bytes in Protobuf. */
  fieldsV1: (): TUnsafe<Record<string, unknown>> =>
    Type.Unsafe<Record<string, unknown>>({
      type: 'object',
      wire: 'fields',
      'x-kubernetes-preserve-unknown-fields': true,
    }),
  /** metav1.Duration: a Go duration string in JSON, nanoseconds in Protobuf. */
  duration: (): TUnsafe<string> => Type.Unsafe<string>({ type: 'string', wire: 'duration' }),
  /** map[string]V. */
  map: <V extends TSchema>(value: V): TUnsafe<Record<string, Static<V>>> =>
    Type.Unsafe<Record<string, Static<V>>>({ type: 'object', additionalProperties: value, wire: 'map' }),
  /** []V with optional strategic-merge-patch metadata. */
  array: <V extends TSchema>(
    items: V,
    a: Pick<Annotations, 'patchMergeKey' | 'patchStrategy' | 'listType' | 'listMapKeys'> = {},
  ): TArray<V> => Type.Array(items, a),
  /** A string restricted to the given values. */
  enumOf: <const V extends string>(values: readonly V[]): TUnsafe<V> =>
    Type.Unsafe<V>({ type: 'string', enum: [...values] }),
};

/** True for a schema node marked optional by {@link opt}. */
export function isOptional(schema: TSchema): boolean {
  return (schema as unknown as Record<symbol, unknown>)[OptionalKind] === 'Optional';
}

/** The TypeBox kind of a node ('Object', 'Array', 'String', 'Unsafe', ...). */
export function kindOf(schema: TSchema): string {
  return (schema as unknown as Record<symbol, unknown>)[Kind] as string;
}
