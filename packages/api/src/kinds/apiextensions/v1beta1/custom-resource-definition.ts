/**
 * apiextensions.platform/v1beta1 CustomResourceDefinition, as Kubernetes 1.21 still serves it (field numbers of
 * its `v1beta1/generated.proto`), and the conversion to and from v1 (model: `v1beta1/conversion.go`). Stored
 * objects are v1; a v1beta1 request is converted on the way in and out.
 *
 * v1beta1 differs from v1 in the places that were per-CRD before versions could differ: `spec.version`,
 * `spec.validation`, `spec.subresources` and `spec.additionalPrinterColumns` (with `JSONPath`), which v1 only has
 * per version; its conversion settings are flat (`webhookClientConfig`, `conversionReviewVersions`).
 */
import { type Static } from '@sinclair/typebox';

import { object, opt, ptr, ref, req, t } from '../../../schema/schema';
import { defineKind, OBJECT_HEAD, schemaPrefix } from '../../../scheme/kind';
import {
  CRDWebhookClientConfigSchema,
  type CustomResourceColumnDefinition,
  type CustomResourceDefinition,
  CustomResourceDefinitionConditionSchema,
  CustomResourceDefinitionNamesSchema,
  type CustomResourceDefinitionVersion,
  CustomResourceSubresourcesSchema,
  CustomResourceValidationSchema,
} from '../v1/custom-resource-definition';

const P = schemaPrefix('apiextensions.platform', 'v1beta1');

/** v1beta1 CustomResourceColumnDefinition (`JSONPath`, not `jsonPath`). */
export const V1beta1ColumnDefinitionSchema = object(`${P}CustomResourceColumnDefinition`, {
  name: req(1, t.string(), 'Human readable name of the column.'),
  type: req(2, t.string(), 'OpenAPI type of the column.'),
  format: opt(3, t.string(), 'OpenAPI format of the column.'),
  description: opt(4, t.string(), 'Human readable description of the column.'),
  priority: opt(5, t.int32(), 'Relative importance of the column; higher is shown in wide output only.'),
  JSONPath: req(6, t.string(), 'Simple JSON path evaluated against each custom resource for the cell.'),
});

/** v1beta1 CustomResourceConversion. */
export const V1beta1ConversionSchema = object(`${P}CustomResourceConversion`, {
  strategy: req(1, t.enumOf(['None', 'Webhook']), 'How custom resources are converted between versions.'),
  webhookClientConfig: opt(2, ref(CRDWebhookClientConfigSchema), 'How to call the webhook (strategy Webhook).'),
  conversionReviewVersions: opt(3, t.array(t.string()), 'ConversionReview versions the webhook expects.'),
});

/** v1beta1 CustomResourceDefinitionVersion. */
export const V1beta1VersionSchema = object(`${P}CustomResourceDefinitionVersion`, {
  name: req(1, t.string(), 'The version name.'),
  served: req(2, t.bool(), 'Whether this version is served.'),
  storage: req(3, t.bool(), 'Whether this version is the one persisted.'),
  deprecated: opt(7, t.bool(), 'This version is deprecated.'),
  deprecationWarning: opt(8, ptr(t.string()), 'Overrides the default deprecation warning.'),
  schema: opt(4, ref(CustomResourceValidationSchema), 'The schema of this version (only if versions differ).'),
  subresources: opt(5, ref(CustomResourceSubresourcesSchema), 'The subresources of this version.'),
  additionalPrinterColumns: opt(6, t.array(ref(V1beta1ColumnDefinitionSchema)), 'Additional Table columns.'),
});

/** v1beta1 CustomResourceDefinitionSpec. */
export const V1beta1SpecSchema = object(`${P}CustomResourceDefinitionSpec`, {
  group: req(1, t.string(), 'API group of the custom resource.'),
  version: opt(2, t.string(), 'The first version (deprecated: use versions).'),
  names: req(3, ref(CustomResourceDefinitionNamesSchema), 'Resource and kind names.'),
  scope: req(4, t.string(), 'Cluster or Namespaced.'),
  validation: opt(5, ref(CustomResourceValidationSchema), 'The schema of every version.'),
  subresources: opt(6, ref(CustomResourceSubresourcesSchema), 'The subresources of every version.'),
  versions: opt(7, t.array(ref(V1beta1VersionSchema)), 'Every API version of the custom resource.'),
  additionalPrinterColumns: opt(8, t.array(ref(V1beta1ColumnDefinitionSchema)), 'Table columns of every version.'),
  conversion: opt(9, ref(V1beta1ConversionSchema), 'Conversion settings.'),
  preserveUnknownFields: opt(10, ptr(t.bool()), 'Keep fields the schema does not specify; defaults to true.'),
});

/** v1beta1 CustomResourceDefinitionStatus. */
export const V1beta1StatusSchema = object(`${P}CustomResourceDefinitionStatus`, {
  conditions: opt(
    1,
    t.array(ref(CustomResourceDefinitionConditionSchema), { listType: 'map', listMapKeys: ['type'] }),
    'State of particular aspects of the CRD.',
  ),
  acceptedNames: opt(2, ref(CustomResourceDefinitionNamesSchema), 'The names actually used to serve discovery.'),
  storedVersions: opt(3, t.array(t.string()), 'Every version of custom resources ever persisted.'),
});

/** v1beta1 CustomResourceDefinition. */
export const CustomResourceDefinitionV1beta1Schema = object(
  `${P}CustomResourceDefinition`,
  {
    ...OBJECT_HEAD,
    spec: req(2, ref(V1beta1SpecSchema), 'How the resource appears.'),
    status: opt(3, ref(V1beta1StatusSchema), 'The state of the CRD.'),
  },
  { description: 'A resource exposed on the API server (deprecated version: use apiextensions.platform/v1).' },
);

/** A v1beta1 CustomResourceDefinition in its JSON form. */
export type CustomResourceDefinitionV1beta1 = Static<typeof CustomResourceDefinitionV1beta1Schema>;
type V1beta1Version = Static<typeof V1beta1VersionSchema>;
type V1beta1Column = Static<typeof V1beta1ColumnDefinitionSchema>;

const clone = <T>(v: T): T => structuredClone(v);

function columnToV1(c: V1beta1Column): CustomResourceColumnDefinition {
  const { JSONPath, ...rest } = c;
  return { ...rest, jsonPath: JSONPath };
}

function columnToV1beta1(c: CustomResourceColumnDefinition): V1beta1Column {
  const { jsonPath, ...rest } = c;
  return { ...rest, JSONPath: jsonPath };
}

/** Kubernetes 1.21's v1beta1 defaults: `versions` from `version`, `preserveUnknownFields` true, names. */
export function defaultCustomResourceDefinitionV1beta1(crd: CustomResourceDefinitionV1beta1): void {
  const spec = crd.spec;
  if (!spec) return;
  if (!spec.versions?.length && spec.version) spec.versions = [{ name: spec.version, served: true, storage: true }];
  if (!spec.version && spec.versions?.length) spec.version = spec.versions[0]!.name;
  spec.preserveUnknownFields ??= true;
  spec.conversion ??= { strategy: 'None' };
  if (spec.conversion.strategy === 'Webhook') spec.conversion.conversionReviewVersions ??= ['v1beta1'];
  const service = spec.conversion.webhookClientConfig?.service;
  if (service) service.port ??= 443;
  if (spec.names) {
    spec.names.singular ||= spec.names.kind?.toLowerCase();
    spec.names.listKind ||= spec.names.kind ? `${spec.names.kind}List` : undefined;
    if (spec.names.singular === undefined) delete spec.names.singular;
    if (spec.names.listKind === undefined) delete spec.names.listKind;
  }
}

/**
 * v1beta1 → v1: the CRD-wide validation, subresources and columns are copied into every version (as 1.21's
 * conversion does); `preserveUnknownFields` is kept only when true.
 */
export function crdV1beta1ToV1(o: CustomResourceDefinitionV1beta1): CustomResourceDefinition {
  const { spec, status, ...head } = clone(o);
  const versions: CustomResourceDefinitionVersion[] = (spec.versions ?? []).map((v) => {
    const { additionalPrinterColumns, ...rest } = v;
    const out: CustomResourceDefinitionVersion = { ...rest };
    const schema = v.schema ?? spec.validation;
    if (schema) out.schema = clone(schema);
    const sub = v.subresources ?? spec.subresources;
    if (sub) out.subresources = clone(sub);
    const cols = additionalPrinterColumns ?? spec.additionalPrinterColumns;
    if (cols) out.additionalPrinterColumns = cols.map(columnToV1);
    return out;
  });
  const conversion: CustomResourceDefinition['spec']['conversion'] = { strategy: spec.conversion?.strategy ?? 'None' };
  if (spec.conversion?.strategy === 'Webhook') {
    conversion.webhook = {
      conversionReviewVersions: spec.conversion.conversionReviewVersions ?? ['v1beta1'],
      ...(spec.conversion.webhookClientConfig ? { clientConfig: spec.conversion.webhookClientConfig } : {}),
    };
  }
  const out: CustomResourceDefinition = {
    ...head,
    apiVersion: 'apiextensions.platform/v1',
    kind: 'CustomResourceDefinition',
    spec: {
      group: spec.group,
      names: spec.names,
      scope: spec.scope,
      versions,
      conversion,
      ...(spec.preserveUnknownFields ? { preserveUnknownFields: true } : {}),
    },
  };
  if (status) out.status = status;
  return out;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * v1 → v1beta1: what every version has in common (schema, subresources, columns) moves back to the CRD-wide
 * fields, as 1.21's conversion does; `spec.version` is the first version.
 */
export function crdV1ToV1beta1(o: CustomResourceDefinition): CustomResourceDefinitionV1beta1 {
  const { spec, status, ...head } = clone(o);
  const versions = spec.versions ?? [];
  const first = versions[0];
  const allSame = (pick: (v: CustomResourceDefinitionVersion) => unknown): boolean =>
    versions.length > 0 && versions.every((v) => sameJson(pick(v), pick(first!)));
  const sharedSchema = allSame((v) => v.schema);
  const sharedSub = allSame((v) => v.subresources);
  const sharedCols = allSame((v) => v.additionalPrinterColumns);
  const out: CustomResourceDefinitionV1beta1 = {
    ...head,
    apiVersion: 'apiextensions.platform/v1beta1',
    kind: 'CustomResourceDefinition',
    spec: {
      group: spec.group,
      names: spec.names,
      scope: spec.scope,
      preserveUnknownFields: spec.preserveUnknownFields ?? false,
      versions: versions.map((v) => {
        const { schema, subresources, additionalPrinterColumns, ...rest } = v;
        const r: V1beta1Version = { ...rest };
        if (schema && !sharedSchema) r.schema = schema;
        if (subresources && !sharedSub) r.subresources = subresources;
        if (additionalPrinterColumns && !sharedCols)
          r.additionalPrinterColumns = additionalPrinterColumns.map(columnToV1beta1);
        return r;
      }),
    },
  };
  if (first) out.spec.version = first.name;
  if (first?.schema && sharedSchema) out.spec.validation = first.schema;
  if (first?.subresources && sharedSub) out.spec.subresources = first.subresources;
  if (first?.additionalPrinterColumns && sharedCols)
    out.spec.additionalPrinterColumns = first.additionalPrinterColumns.map(columnToV1beta1);
  const c = spec.conversion;
  if (c) {
    out.spec.conversion = { strategy: c.strategy };
    if (c.webhook?.clientConfig) out.spec.conversion.webhookClientConfig = c.webhook.clientConfig;
    if (c.webhook?.conversionReviewVersions)
      out.spec.conversion.conversionReviewVersions = c.webhook.conversionReviewVersions;
  }
  if (status) out.status = status;
  return out;
}

/** The v1beta1 CustomResourceDefinition kind. */
export const CustomResourceDefinitionV1beta1Kind = defineKind({
  group: 'apiextensions.platform',
  version: 'v1beta1',
  kind: 'CustomResourceDefinition',
  plural: 'customresourcedefinitions',
  shortNames: ['crd', 'crds'],
  categories: ['api-extensions'],
  scope: 'Cluster',
  subresources: { status: { verbs: ['get', 'patch', 'update'] } },
  schema: CustomResourceDefinitionV1beta1Schema,
  defaults: (o) => defaultCustomResourceDefinitionV1beta1(o),
});
