/**
 * What every handler of one resource (or subresource) needs: its storage, kind, serializers, columns, admission
 * and limits. Built once per resource by the installer.
 */
import { type AnnotatedSchema, type ApiObject, type Kind, type TableColumn } from '@platform/api';

import { type RequestContext, type RestStorage } from '../../registry/rest/rest';
import { type InternalErrorLogger, type Serializers } from '../responses/writers';

/** Admission as handlers see it: mutation before the registry, validation passed to it as a callback. */
export interface Admission {
  /** Mutating admission of a create or update (may change `obj`). */
  admit(
    ctx: RequestContext,
    op: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT',
    obj: ApiObject | undefined,
    old: ApiObject | undefined,
    scope: RequestScope,
    dryRun: boolean,
    /** The name from the path, when there is no object to read it from (delete). */
    name?: string,
  ): Promise<void>;
  /** Validating admission (must not change anything). */
  validate(
    ctx: RequestContext,
    op: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT',
    obj: ApiObject | undefined,
    old: ApiObject | undefined,
    scope: RequestScope,
    dryRun: boolean,
    /** The name from the path, when there is no object to read it from (delete). */
    name?: string,
  ): Promise<void>;
}

/** Admission that admits everything (until the admission chain of the security issue is configured). */
export const ALWAYS_ADMIT: Admission = {
  admit: async () => {},
  validate: async () => {},
};

/** The scope of one resource's handlers. */
export interface RequestScope {
  /** The kind the endpoint reads and writes (for subresources like scale, the subresource's kind). */
  kind: Kind;
  /** The kind of the resource whose path serves the endpoint (group, version, scope); `kind` for main resources. */
  resourceKind: Kind;
  /** The resource name in paths. */
  resource: string;
  /** '' for the main resource. */
  subresource: string;
  storage: RestStorage;
  serializers: Serializers;
  columns: TableColumn<ApiObject>[];
  admission: Admission;
  /** The largest request body accepted (413 beyond). */
  maxRequestBodyBytes: number;
  /** Watches last a random time between this and twice it unless `timeoutSeconds` asks for less. */
  minRequestTimeoutSeconds: number;
  now(): number;
  logBug?: InternalErrorLogger;
  /** The ServerSideApply feature gate: apply patches and managed fields (on when unset). */
  serverSideApply?: boolean;
  /**
   * Custom objects (as 1.21 serves them): JSON and YAML only (Protobuf is 406/415), no strategic merge patch (415),
   * and the OpenAPI definitions of the CRD's version instead of the kind's schema ids. `applySchema`: the CRD
   * version's schema as server-side apply reads its objects (list and map types); without one, apply reads them
   * untyped.
   */
  unstructured?: { schemaId: string; listSchemaId: string; applySchema?: AnnotatedSchema };
}
