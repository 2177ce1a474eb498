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
 * This file is the interface; the implementation replaces the bodies below.
 */
import { type FieldError, type FieldPath } from '@platform/api';

/** A `JSONSchemaProps` of `apiextensions.platform/v1`, as JSON. */
export type JSONSchemaProps = Record<string, unknown>;

/** What differs between the CRD versions that carry a schema. */
export interface SchemaCheckOptions {
  /** v1 requires a structural schema; v1beta1 (and `preserveUnknownFields: true`) allow non-structural ones. */
  requireStructural: boolean;
  /** `x-kubernetes-*` and `default` allowed (v1, or v1beta1 with `preserveUnknownFields: false`). */
  allowDefaults: boolean;
}

/** The errors of a CRD's schema at `path` (`spec.versions[i].schema.openAPIV3Schema` or `spec.validation...`). */
export function validateCRDSchema(
  schema: JSONSchemaProps,
  path: FieldPath,
  options: SchemaCheckOptions,
): FieldError[] {
  void schema;
  void path;
  void options;
  return [];
}

/** A schema ready to serve objects of one version of a CRD. */
export interface CompiledSchema {
  /** The errors of `obj` (a whole custom object, apiVersion/kind/metadata included) against the schema. */
  validate(obj: Record<string, unknown>): FieldError[];
  /** Applies the schema's `default`s to `obj` in place (on create, update and read from storage, as 1.21). */
  applyDefaults(obj: Record<string, unknown>): void;
  /**
   * Removes fields the schema does not specify, in place (`x-kubernetes-preserve-unknown-fields` keeps them,
   * `x-kubernetes-embedded-resource` keeps apiVersion/kind/metadata); apiVersion, kind and metadata at the root
   * are kept, and metadata is pruned to ObjectMeta by the caller.
   */
  prune(obj: Record<string, unknown>): void;
}

/** Compiles a schema already checked by {@link validateCRDSchema}. `preserveUnknownFields`: the CRD's v1beta1 flag. */
export function compileSchema(schema: JSONSchemaProps | undefined, preserveUnknownFields = false): CompiledSchema {
  void schema;
  void preserveUnknownFields;
  return { validate: () => [], applyDefaults: () => undefined, prune: () => undefined };
}

/** The schema as an OpenAPI v2 definition (1.21's `ToStructuralOpenAPIV2`: nullable dropped, etc.). */
export function toOpenAPIV2(schema: JSONSchemaProps): Record<string, unknown> {
  return schema;
}
