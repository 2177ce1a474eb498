/**
 * A kind definition: everything the API machinery needs to know about one kind, in one place. Adding a kind is
 * one small file: its schema (written with the vocabulary of `schema/schema.ts`) and a `defineKind` call.
 */
import { type Static, type TObject, type TProperties } from '@sinclair/typebox';

import { ListMetaSchema, ObjectMetaSchema } from '../meta/v1/types';
import { object, opt, ref, req, t } from '../schema/schema';
import { type TableColumn } from '../table/table';

/** The verbs discovery advertises. */
export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection' | 'proxy';

/** All verbs of an ordinary persisted resource. */
export const STANDARD_VERBS: readonly Verb[] = [
  'create',
  'delete',
  'deletecollection',
  'get',
  'list',
  'patch',
  'update',
  'watch',
];

/** Cluster- or namespace-scoped. */
export type Scope = 'Cluster' | 'Namespaced';

/** A subresource (`status`, `scale`, `binding`, ...) as discovery describes it. */
export interface SubresourceSpec {
  /** The kind the subresource reads and writes; the parent kind when omitted (as for `status`). */
  kind?: { group: string; version: string; kind: string };
  verbs: Verb[];
}

/**
 * A function of an object of one kind. Declared through a method so that kinds with different object types are
 * all assignable to `Kind` (method parameters are compared bivariantly).
 */
export type ObjectReader<T, R> = { read(obj: T): R }['read'];

/** The minimal shape of every persisted object. */
export interface ApiObject {
  apiVersion?: string;
  kind?: string;
  metadata?: Static<typeof ObjectMetaSchema>;
}

/** What a kind file declares. */
export interface KindSpec<S extends TObject> {
  /** API group; `''` is the core group. */
  group: string;
  version: string;
  kind: string;
  /** The resource name used in paths (lowercase plural). */
  plural: string;
  /** Lowercase singular; defaults to the lowercased kind. */
  singular?: string;
  shortNames?: string[];
  categories?: string[];
  scope: Scope;
  /** Verbs of the main resource; the standard verbs by default. */
  verbs?: Verb[];
  subresources?: Record<string, SubresourceSpec>;
  schema: S;
  /** Table columns after `Name` (Kubernetes' printers); the default table is `Name` + `Created At`. */
  columns?: TableColumn<Static<S>>[];
  /** Field selector labels beyond `metadata.name` and `metadata.namespace`, with how to read each. */
  fields?: Record<string, ObjectReader<Static<S>, string>>;
  /** Fills in defaults after structural validation. Must not throw; runs on every decode of untrusted input. */
  defaults?(obj: Static<S>): void;
  /** False for virtual kinds (reviews) and others that are not stored or not served as Protobuf. */
  persisted?: boolean;
}

/** A kind as the rest of the machinery sees it. */
export interface Kind<S extends TObject = TObject> extends Required<
  Pick<KindSpec<S>, 'group' | 'version' | 'kind' | 'plural' | 'scope'>
> {
  readonly spec: KindSpec<S>;
  readonly singular: string;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  readonly verbs: readonly Verb[];
  readonly subresources: Readonly<Record<string, SubresourceSpec>>;
  /** `v1` for the core group, `<group>/<version>` otherwise. */
  readonly apiVersion: string;
  readonly listKind: string;
  readonly schema: S;
  readonly listSchema: TObject;
  readonly namespaced: boolean;
  /** Every field selector label the kind supports, with its reader. */
  readonly fields: Readonly<Record<string, ObjectReader<Static<S>, string>>>;
}

/**
 * The `apiVersion` and `kind` properties of a top-level kind (not in Protobuf: the envelope carries them).
 * Shared by every kind: schema nodes are never changed once built.
 */
export const TYPE_META = {
  apiVersion: opt(0, t.string(), 'APIVersion defines the versioned schema of this representation of an object.'),
  kind: opt(0, t.string(), 'Kind is a string value representing the REST resource this object represents.'),
};

/** `apiVersion`, `kind` and `metadata` (field 1): the head of every persisted kind's schema. */
export const OBJECT_HEAD = { ...TYPE_META, metadata: opt(1, ref(ObjectMetaSchema), 'Standard object metadata.') };

/** The schema id prefix of a group version (`io.platform.api.apps.v1.`). */
export function schemaPrefix(group: string, version: string): string {
  const g = group === '' ? 'core' : group.replace(/\.platform$/, '');
  return `io.platform.api.${g}.${version}.`;
}

/** Defines a kind. Its list kind (`<Kind>List`, fields `metadata` = 1 and `items` = 2) is defined with it. */
export function defineKind<S extends TObject>(spec: KindSpec<S>): Kind<S> {
  const apiVersion = spec.group === '' ? spec.version : `${spec.group}/${spec.version}`;
  const listId = `${spec.schema.$id as string}List`;
  const listSchema = object(listId, {
    ...TYPE_META,
    metadata: opt(1, ref(ListMetaSchema), 'Standard list metadata.'),
    items: req(2, t.array(ref(spec.schema)), `List of ${spec.plural}.`),
  } as TProperties);
  const baseFields: Record<string, ObjectReader<Static<S>, string>> = {
    'metadata.name': (o) => (o as ApiObject).metadata?.name ?? '',
  };
  if (spec.scope === 'Namespaced') baseFields['metadata.namespace'] = (o) => (o as ApiObject).metadata?.namespace ?? '';
  return {
    spec,
    group: spec.group,
    version: spec.version,
    kind: spec.kind,
    plural: spec.plural,
    scope: spec.scope,
    singular: spec.singular ?? spec.kind.toLowerCase(),
    shortNames: spec.shortNames ?? [],
    categories: spec.categories ?? [],
    verbs: spec.verbs ?? STANDARD_VERBS,
    subresources: spec.subresources ?? {},
    apiVersion,
    listKind: `${spec.kind}List`,
    schema: spec.schema,
    listSchema,
    namespaced: spec.scope === 'Namespaced',
    fields: { ...baseFields, ...spec.fields },
  };
}
