/**
 * Structural OpenAPI v3 schemas of CustomResourceDefinitions (model: Kubernetes 1.21's
 * `apiextensions-apiserver/pkg/apiserver/schema` and `.../apis/apiextensions/validation`).
 *
 * The contract between the CRD machinery (`../`) and the schema work:
 * - {@link validateCRDSchema} checks a CRD's `openAPIV3Schema` itself (allowed keywords, the structural-schema
 *   rules, defaults that validate and survive pruning), with 1.21's messages and field paths;
 * - {@link compileSchema} turns a valid schema into what serving a custom object needs: validation of an object
 *   (422 field errors with paths), defaulting and pruning of unknown fields;
 * - {@link toOpenAPIV2} gives the schema as published in `/openapi/v2` (what `kubectl explain` reads).
 *
 * The implementation is split by concern: `types.ts` (the typed schema), `crd-validation.ts`, `validator.ts`
 * (object validation as kube-openapi), `formats.ts`, `structural-checks.ts` (embedded resources, list types),
 * `pruning.ts` (pruning and defaulting) and `openapi-v2.ts`.
 */
import { type FieldError, FieldPath } from '@platform/api';
import { checkSchema } from './crd-validation';
import { schemaToOpenAPIV2 } from './openapi-v2';
import { applyDefaults, hasDefaults, needsDefaults, prune, pruneNonNullableNullsWithoutDefaults } from './pruning';
import { validateEmbeddedResources, validateListSetsAndMaps } from './structural-checks';
import { type Schema, parseSchema } from './types';
import { validateAgainstSchema } from './validator';

export { type Schema, parseSchema } from './types';
export { SUPPORTED_FORMATS } from './formats';

/** A `JSONSchemaProps` of `apiextensions.platform/v1`, as JSON. */
export type JSONSchemaProps = Record<string, unknown>;

/** What differs between the CRD versions that carry a schema. */
export interface SchemaCheckOptions {
  /** v1 requires a structural schema; v1beta1 (and `preserveUnknownFields: true`) allow non-structural ones. */
  requireStructural: boolean;
  /** `default` allowed (v1, or v1beta1 with `preserveUnknownFields: false`). */
  allowDefaults: boolean;
  /**
   * Defaults must be unchanged by pruning (default true, as 1.21 on create; on update 1.21 keeps this off when the
   * stored CRD already had such a default).
   */
  requirePrunedDefaults?: boolean;
  /** Items of `x-kubernetes-list-type: set` lists must be atomic (default true; ratcheted on update as above). */
  requireAtomicSetType?: boolean;
  /**
   * The version has the status subresource: 1.21 then allows only some keywords at the root (`properties`,
   * `required`, `type: object`, descriptions and scalar checks), and reports the first other one.
   */
  statusSubresource?: boolean;
}

/** The errors of a CRD's schema at `path` (`spec.versions[i].schema.openAPIV3Schema` or `spec.validation...`). */
export function validateCRDSchema(schema: JSONSchemaProps, path: FieldPath, options: SchemaCheckOptions): FieldError[] {
  const parsed = parseSchema(schema, path);
  return [...parsed.errors, ...checkSchema(schema, parsed.schema, path, options)];
}

/** A schema ready to serve objects of one version of a CRD. */
export interface CompiledSchema {
  /** The errors of `obj` (a whole custom object, apiVersion/kind/metadata included) against the schema. */
  validate(obj: Record<string, unknown>): FieldError[];
  /**
   * The errors of `obj` on an update of the status subresource (1.21's status strategy): `obj.status` against the
   * schema's `properties.status` (paths below `status`, messages relative to it, as 1.21), then the embedded
   * resources and list-type invariants of the whole object.
   */
  validateStatus(obj: Record<string, unknown>): FieldError[];
  /** Applies the schema's `default`s to `obj` in place (on create, update and read from storage, as 1.21). */
  applyDefaults(obj: Record<string, unknown>): void;
  /**
   * `obj` with the schema's defaults: `obj` itself when none applies, else a defaulted copy. `obj` is never changed
   * (it may be the watch cache's frozen copy, shared by every reader).
   */
  defaulted<T extends object>(obj: T): T;
  /**
   * Removes fields the schema does not specify, in place (`x-kubernetes-preserve-unknown-fields` keeps them,
   * `x-kubernetes-embedded-resource` keeps apiVersion/kind/metadata); apiVersion, kind and metadata at the root
   * are kept, and metadata is pruned to ObjectMeta by the caller. Nulls the schema neither allows (`nullable`) nor
   * defaults are removed too (1.21 does both when it prunes). Nothing is removed with `preserveUnknownFields`.
   */
  prune(obj: Record<string, unknown>): void;
}

/** Compiles a schema already checked by {@link validateCRDSchema}. `preserveUnknownFields`: the CRD's v1beta1 flag. */
export function compileSchema(schema: JSONSchemaProps | undefined, preserveUnknownFields = false): CompiledSchema {
  const s: Schema | undefined = schema === undefined ? undefined : parseSchema(schema).schema;
  // Most schemas have no embedded resources and no set or map lists: skip those walks of every object then.
  const structural = s !== undefined && usesStructuralChecks(s);
  // Most schemas have no defaults: defaulting every object read is then no walk at all.
  const defaults = hasDefaults(s);
  return {
    validate(obj) {
      if (!s) return [];
      const errs = validateAgainstSchema(s, obj, new FieldPath());
      return structural ? [...errs, ...structuralErrors(obj, s)] : errs;
    },
    validateStatus(obj) {
      if (!s) return [];
      const status = s.properties?.get('status');
      const statusErrs = status ? validateAgainstSchema(status, obj.status ?? null, new FieldPath('status')) : [];
      return structural ? [...statusErrs, ...structuralErrors(obj, s)] : statusErrs;
    },
    applyDefaults(obj) {
      if (defaults) applyDefaults(obj, s);
    },
    defaulted(obj) {
      if (!defaults || !needsDefaults(obj, s)) return obj;
      const copy = structuredClone(obj);
      applyDefaults(copy, s);
      return copy;
    },
    prune(obj) {
      if (preserveUnknownFields) return;
      prune(obj, s, true);
      pruneNonNullableNullsWithoutDefaults(obj, s);
    },
  };
}

/** Whether a schema has embedded resources or `set`/`map` lists in its structural part. */
function usesStructuralChecks(s: Schema): boolean {
  if (s['x-kubernetes-embedded-resource']) return true;
  const lt = s['x-kubernetes-list-type'];
  if (lt === 'set' || lt === 'map') return true;
  if (s.items && usesStructuralChecks(s.items)) return true;
  if (typeof s.additionalProperties === 'object' && usesStructuralChecks(s.additionalProperties)) return true;
  for (const sub of s.properties?.values() ?? []) if (usesStructuralChecks(sub)) return true;
  return false;
}

/** The errors of embedded resources and of list-type invariants in a whole object. */
function structuralErrors(obj: Record<string, unknown>, s: Schema): FieldError[] {
  const root = new FieldPath();
  return [...validateEmbeddedResources(obj, s, root), ...validateListSetsAndMaps(obj, s, root)];
}

/** The schema as an OpenAPI v2 definition (1.21's `ToStructuralOpenAPIV2`: nullable dropped, etc.). */
export function toOpenAPIV2(schema: JSONSchemaProps): Record<string, unknown> {
  return schemaToOpenAPIV2(schema);
}
