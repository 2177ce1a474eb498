/**
 * apiextensions.platform/v1 CustomResourceDefinition, as in Kubernetes 1.21 (field numbers of
 * `apiextensions-apiserver/pkg/apis/apiextensions/v1/generated.proto`).
 *
 * One deliberate difference: a version's `openAPIV3Schema` (Kubernetes' recursive JSONSchemaProps message) travels
 * in Protobuf as the JSON of the schema in one `bytes` field (the `raw` wire form), not as nested JSONSchemaProps
 * messages. JSON and YAML, which is what every client of CRDs uses, are exactly 1.21's.
 */
import { type Static, Type } from '@sinclair/typebox';

import { object, opt, ptr, ref, req, t } from '../../../schema/schema';
import { defineKind, OBJECT_HEAD, schemaPrefix } from '../../../scheme/kind';

const P = schemaPrefix('apiextensions.platform', 'v1');

/** A JSON value of any type, or a JSON Schema kept as its JSON (see the module comment). */
export const jsonValue = (): ReturnType<typeof Type.Unsafe<Record<string, unknown>>> =>
  Type.Unsafe<Record<string, unknown>>({
    type: 'object',
    wire: 'raw',
    'x-kubernetes-preserve-unknown-fields': true,
  });

/** ServiceReference of a conversion webhook. */
export const CRDServiceReferenceSchema = object(`${P}ServiceReference`, {
  namespace: req(1, t.string(), 'Namespace of the service.'),
  name: req(2, t.string(), 'Name of the service.'),
  path: opt(3, ptr(t.string()), 'URL path at which the webhook is contacted.'),
  port: opt(4, ptr(t.int32()), 'Service port of the webhook; defaults to 443.'),
});

/** WebhookClientConfig of a conversion webhook. */
export const CRDWebhookClientConfigSchema = object(`${P}WebhookClientConfig`, {
  url: opt(3, ptr(t.string()), 'Location of the webhook, in standard URL form.'),
  service: opt(1, ref(CRDServiceReferenceSchema), 'Reference to the service of the webhook.'),
  caBundle: opt(2, t.bytes(), 'PEM encoded CA bundle which validates the serving certificate of the webhook.'),
});

/** WebhookConversion. */
export const WebhookConversionSchema = object(`${P}WebhookConversion`, {
  clientConfig: opt(2, ref(CRDWebhookClientConfigSchema), 'How to call the webhook.'),
  conversionReviewVersions: req(3, t.array(t.string()), 'ConversionReview versions the webhook expects, in order.'),
});

/** CustomResourceConversion. */
export const CustomResourceConversionSchema = object(`${P}CustomResourceConversion`, {
  strategy: req(1, t.enumOf(['None', 'Webhook']), 'How custom resources are converted between versions.'),
  webhook: opt(2, ref(WebhookConversionSchema), 'How to call the conversion webhook (strategy Webhook).'),
});

/** CustomResourceDefinitionNames. */
export const CustomResourceDefinitionNamesSchema = object(`${P}CustomResourceDefinitionNames`, {
  plural: req(1, t.string(), 'Plural name of the resource to serve.'),
  singular: opt(2, t.string(), 'Singular name of the resource; defaults to the lowercased kind.'),
  shortNames: opt(3, t.array(t.string()), 'Short names for the resource.'),
  kind: req(4, t.string(), 'Serialized kind of the resource.'),
  listKind: opt(5, t.string(), 'Serialized kind of the list; defaults to `kind`List.'),
  categories: opt(6, t.array(t.string()), 'Grouped resources this resource belongs to (e.g. all).'),
});

/** CustomResourceColumnDefinition. */
export const CustomResourceColumnDefinitionSchema = object(`${P}CustomResourceColumnDefinition`, {
  name: req(1, t.string(), 'Human readable name of the column.'),
  type: req(2, t.string(), 'OpenAPI type of the column.'),
  format: opt(3, t.string(), 'OpenAPI format of the column.'),
  description: opt(4, t.string(), 'Human readable description of the column.'),
  priority: opt(5, t.int32(), 'Relative importance of the column; higher is shown in wide output only.'),
  jsonPath: req(6, t.string(), 'Simple JSON path evaluated against each custom resource for the cell.'),
});

/** CustomResourceSubresourceStatus (empty). */
export const CustomResourceSubresourceStatusSchema = object(`${P}CustomResourceSubresourceStatus`, {});

/** CustomResourceSubresourceScale. */
export const CustomResourceSubresourceScaleSchema = object(`${P}CustomResourceSubresourceScale`, {
  specReplicasPath: req(1, t.string(), 'JSON path of Scale spec.replicas, under .spec.'),
  statusReplicasPath: req(2, t.string(), 'JSON path of Scale status.replicas, under .status.'),
  labelSelectorPath: opt(3, ptr(t.string()), 'JSON path of Scale status.selector, under .spec or .status.'),
});

/** CustomResourceSubresources. */
export const CustomResourceSubresourcesSchema = object(`${P}CustomResourceSubresources`, {
  status: opt(1, ref(CustomResourceSubresourceStatusSchema), 'Serve a /status subresource.'),
  scale: opt(2, ref(CustomResourceSubresourceScaleSchema), 'Serve a /scale subresource.'),
});

/** CustomResourceValidation. */
export const CustomResourceValidationSchema = object(`${P}CustomResourceValidation`, {
  openAPIV3Schema: opt(1, jsonValue(), 'The OpenAPI v3 schema used for validation, pruning and defaulting.'),
});

/** CustomResourceDefinitionVersion. */
export const CustomResourceDefinitionVersionSchema = object(`${P}CustomResourceDefinitionVersion`, {
  name: req(1, t.string(), 'The version name, e.g. v1, v2beta1.'),
  served: req(2, t.bool(), 'Whether this version is served.'),
  storage: req(3, t.bool(), 'Whether this version is the one persisted; exactly one version has it.'),
  deprecated: opt(7, t.bool(), 'This version is deprecated: requests to it get a warning.'),
  deprecationWarning: opt(8, ptr(t.string()), 'Overrides the default deprecation warning.'),
  schema: opt(4, ref(CustomResourceValidationSchema), 'The schema of this version.'),
  subresources: opt(5, ref(CustomResourceSubresourcesSchema), 'The subresources of this version.'),
  additionalPrinterColumns: opt(
    6,
    t.array(ref(CustomResourceColumnDefinitionSchema)),
    'Additional columns returned in Table output.',
  ),
});

/** CustomResourceDefinitionSpec. */
export const CustomResourceDefinitionSpecSchema = object(`${P}CustomResourceDefinitionSpec`, {
  group: req(1, t.string(), 'API group of the custom resource.'),
  names: req(3, ref(CustomResourceDefinitionNamesSchema), 'Resource and kind names of the custom resource.'),
  scope: req(4, t.string(), 'Cluster or Namespaced.'),
  versions: req(7, t.array(ref(CustomResourceDefinitionVersionSchema)), 'Every API version of the custom resource.'),
  conversion: opt(9, ref(CustomResourceConversionSchema), 'Conversion settings of the CRD.'),
  preserveUnknownFields: opt(10, t.bool(), 'Keep fields the schema does not specify (deprecated).'),
});

/** CustomResourceDefinitionCondition. */
export const CustomResourceDefinitionConditionSchema = object(`${P}CustomResourceDefinitionCondition`, {
  type: req(1, t.string(), 'Established, NamesAccepted or Terminating.'),
  status: req(2, t.string(), 'True, False or Unknown.'),
  lastTransitionTime: opt(3, t.time(), 'Last time the condition transitioned.'),
  reason: opt(4, t.string(), 'One-word CamelCase reason of the last transition.'),
  message: opt(5, t.string(), 'Human readable details of the last transition.'),
});

/** CustomResourceDefinitionStatus. */
export const CustomResourceDefinitionStatusSchema = object(`${P}CustomResourceDefinitionStatus`, {
  conditions: opt(
    1,
    t.array(ref(CustomResourceDefinitionConditionSchema), { listType: 'map', listMapKeys: ['type'] }),
    'State of particular aspects of the CRD.',
  ),
  acceptedNames: opt(2, ref(CustomResourceDefinitionNamesSchema), 'The names actually used to serve discovery.'),
  storedVersions: opt(3, t.array(t.string()), 'Every version of custom resources ever persisted.'),
});

/** CustomResourceDefinition. */
export const CustomResourceDefinitionSchema = object(
  `${P}CustomResourceDefinition`,
  {
    ...OBJECT_HEAD,
    spec: req(2, ref(CustomResourceDefinitionSpecSchema), 'How the resource appears.'),
    status: opt(3, ref(CustomResourceDefinitionStatusSchema), 'The state of the CRD.'),
  },
  { description: 'A resource exposed on the API server; its name is <spec.names.plural>.<spec.group>.' },
);

/** A CustomResourceDefinition object in its JSON form. */
export type CustomResourceDefinition = Static<typeof CustomResourceDefinitionSchema>;
/** One version of a CRD. */
export type CustomResourceDefinitionVersion = Static<typeof CustomResourceDefinitionVersionSchema>;
/** The names of a CRD. */
export type CustomResourceDefinitionNames = Static<typeof CustomResourceDefinitionNamesSchema>;
/** A condition of a CRD. */
export type CustomResourceDefinitionCondition = Static<typeof CustomResourceDefinitionConditionSchema>;
/** A printer column of a CRD version. */
export type CustomResourceColumnDefinition = Static<typeof CustomResourceColumnDefinitionSchema>;

/** Kubernetes 1.21's defaults of a v1 CRD (`SetDefaults_*` of apiextensions/v1). */
export function defaultCustomResourceDefinition(crd: CustomResourceDefinition): void {
  const spec = crd.spec;
  if (!spec) return;
  if (spec.names) {
    spec.names.singular ||= spec.names.kind?.toLowerCase();
    spec.names.listKind ||= spec.names.kind ? `${spec.names.kind}List` : undefined;
    if (spec.names.singular === undefined) delete spec.names.singular;
    if (spec.names.listKind === undefined) delete spec.names.listKind;
  }
  spec.conversion ??= { strategy: 'None' };
  const webhook = spec.conversion.webhook?.clientConfig?.service;
  if (webhook) webhook.port ??= 443;
  crd.status ??= {};
  crd.status.storedVersions ??= [];
}

/** The CustomResourceDefinition kind: discovery facts and defaults (`kubectl get crd` prints Name and Created At). */
export const CustomResourceDefinitionKind = defineKind({
  group: 'apiextensions.platform',
  version: 'v1',
  kind: 'CustomResourceDefinition',
  plural: 'customresourcedefinitions',
  shortNames: ['crd', 'crds'],
  categories: ['api-extensions'],
  scope: 'Cluster',
  subresources: { status: { verbs: ['get', 'patch', 'update'] } },
  schema: CustomResourceDefinitionSchema,
  defaults: (o) => defaultCustomResourceDefinition(o),
});
