/**
 * admissionregistration.platform/v1: MutatingWebhookConfiguration and ValidatingWebhookConfiguration, the
 * cluster-scoped lists of admission webhooks the API server calls (Kubernetes 1.21's
 * `admissionregistration.k8s.io/v1`, its Protobuf field numbers included).
 */
import { type Static } from '@sinclair/typebox';

import { LabelSelectorSchema } from '../../../meta/v1/types';
import { embed, object, opt, ptr, ref, req, t } from '../../../schema/schema';
import { defineKind, OBJECT_HEAD, schemaPrefix } from '../../../scheme/kind';
import { AGE_COLUMN, type TableColumn } from '../../../table/table';

/** The admission registration API group. */
export const ADMISSION_REGISTRATION_GROUP = 'admissionregistration.platform';
const P = schemaPrefix(ADMISSION_REGISTRATION_GROUP, 'v1');

/** ServiceReference: a webhook reached through a service of the cluster. */
export const WebhookServiceReferenceSchema = object(`${P}ServiceReference`, {
  namespace: req(1, t.string(), 'The namespace of the service.'),
  name: req(2, t.string(), 'The name of the service.'),
  path: opt(3, t.string(), 'An optional URL path sent in any request to this service.'),
  port: opt(4, ptr(t.int32()), 'The port on the service; 443 by default.'),
});

/** WebhookClientConfig: how the API server reaches a webhook. */
export const WebhookClientConfigSchema = object(`${P}WebhookClientConfig`, {
  url: opt(3, ptr(t.string()), 'The location of the webhook, `https://host:port/path`; exclusive with service.'),
  service: opt(1, ref(WebhookServiceReferenceSchema), 'The service of the webhook; exclusive with url.'),
  caBundle: opt(2, t.bytes(), "PEM CA bundle validating the webhook's serving certificate; system roots if unset."),
});
/** A WebhookClientConfig object in its JSON form. */
export type WebhookClientConfig = Static<typeof WebhookClientConfigSchema>;

/** Rule: the groups, versions and resources a webhook applies to. */
export const RuleSchema = object(`${P}Rule`, {
  apiGroups: opt(1, t.array(t.string()), "The API groups; '*' is every group."),
  apiVersions: opt(2, t.array(t.string()), "The API versions; '*' is every version."),
  resources: opt(
    3,
    t.array(t.string()),
    "The resources; 'pods' is pods, 'pods/*' every subresource of pods, '*/scale' every scale subresource, '*' every resource.",
  ),
  scope: opt(4, ptr(t.enumOf(['Cluster', 'Namespaced', '*'])), 'Cluster, Namespaced or * (default).'),
});

/** RuleWithOperations: a Rule and the operations it applies to. */
export const RuleWithOperationsSchema = object(`${P}RuleWithOperations`, {
  operations: opt(1, t.array(t.enumOf(['*', 'CREATE', 'UPDATE', 'DELETE', 'CONNECT'])), "The operations; '*' is all."),
  ...embed(2, 'rule', RuleSchema),
});
/** A RuleWithOperations object in its JSON form. */
export type RuleWithOperations = Static<typeof RuleWithOperationsSchema>;

/** The values of `failurePolicy`. */
export const FAILURE_POLICY = ['Ignore', 'Fail'] as const;
/** The values of `matchPolicy`. */
export const MATCH_POLICY = ['Exact', 'Equivalent'] as const;
/** The values of `sideEffects` (v1 accepts only None and NoneOnDryRun). */
export const SIDE_EFFECTS = ['Unknown', 'None', 'Some', 'NoneOnDryRun'] as const;

/** The named types a webhook refers to: v1's, or their copies in another version. */
export interface WebhookTypes {
  clientConfig: typeof WebhookClientConfigSchema;
  rule: typeof RuleWithOperationsSchema;
}

function buildWebhookProps(objectSelectorProto: number, types: WebhookTypes) {
  return {
    name: req(1, t.string(), 'The fully qualified name of the webhook (at least three DNS labels).'),
    clientConfig: req(2, ref(types.clientConfig), 'How to reach the webhook.'),
    rules: opt(3, t.array(ref(types.rule)), 'The operations and resources the webhook cares about.'),
    failurePolicy: opt(
      4,
      ptr(t.enumOf(FAILURE_POLICY)),
      'What an error calling the webhook does: Fail (default) or Ignore.',
    ),
    matchPolicy: opt(
      9,
      ptr(t.enumOf(MATCH_POLICY)),
      'Exact, or Equivalent (default): also requests on another version of a matched resource.',
    ),
    namespaceSelector: opt(
      5,
      ref(LabelSelectorSchema),
      "Which objects' namespaces the webhook runs on; all by default.",
    ),
    objectSelector: opt(
      objectSelectorProto,
      ref(LabelSelectorSchema),
      'Which objects, by their labels; all by default.',
    ),
    sideEffects: req(6, ptr(t.enumOf(SIDE_EFFECTS)), 'None or NoneOnDryRun (Unknown and Some are refused in v1).'),
    timeoutSeconds: opt(7, ptr(t.int32()), 'Time-out of a call, 1 to 30 seconds; 10 by default.'),
    admissionReviewVersions: req(
      8,
      t.array(t.string()),
      'AdmissionReview versions the webhook accepts, preferred first.',
    ),
  };
}

/** The fields of a webhook, as {@link webhookProps} builds them. */
export type WebhookProps = ReturnType<typeof buildWebhookProps>;

/**
 * The fields of a webhook in v1 (v1beta1 builds on them, see `../v1beta1/webhook.ts`); `objectSelectorProto` is
 * the Protobuf number of `objectSelector`, which differs between the mutating and the validating webhook, and
 * `types` the named types the fields refer to (v1's by default).
 */
export function webhookProps(
  objectSelectorProto: number,
  types: WebhookTypes = { clientConfig: WebhookClientConfigSchema, rule: RuleWithOperationsSchema },
): WebhookProps {
  return buildWebhookProps(objectSelectorProto, types);
}

/** MutatingWebhook: one webhook of a MutatingWebhookConfiguration. */
export const MutatingWebhookSchema = object(`${P}MutatingWebhook`, {
  ...webhookProps(11),
  reinvocationPolicy: opt(
    10,
    ptr(t.enumOf(['Never', 'IfNeeded'])),
    'IfNeeded: called again when a later admission plugin changed the object; Never (default).',
  ),
});
/** A MutatingWebhook object in its JSON form. */
export type MutatingWebhook = Static<typeof MutatingWebhookSchema>;

/** ValidatingWebhook: one webhook of a ValidatingWebhookConfiguration. */
export const ValidatingWebhookSchema = object(`${P}ValidatingWebhook`, webhookProps(10));
/** A ValidatingWebhook object in its JSON form. */
export type ValidatingWebhook = Static<typeof ValidatingWebhookSchema>;

/** MutatingWebhookConfiguration, as in Kubernetes 1.21. */
export const MutatingWebhookConfigurationSchema = object(
  `${P}MutatingWebhookConfiguration`,
  {
    ...OBJECT_HEAD,
    webhooks: opt(
      2,
      t.array(ref(MutatingWebhookSchema), { patchMergeKey: 'name', patchStrategy: 'merge' }),
      'The webhooks.',
    ),
  },
  { description: 'MutatingWebhookConfiguration describes the admission webhooks that may change an object.' },
);
/** A MutatingWebhookConfiguration object in its JSON form. */
export type MutatingWebhookConfiguration = Static<typeof MutatingWebhookConfigurationSchema>;

/** ValidatingWebhookConfiguration, as in Kubernetes 1.21. */
export const ValidatingWebhookConfigurationSchema = object(
  `${P}ValidatingWebhookConfiguration`,
  {
    ...OBJECT_HEAD,
    webhooks: opt(
      2,
      t.array(ref(ValidatingWebhookSchema), { patchMergeKey: 'name', patchStrategy: 'merge' }),
      'The webhooks.',
    ),
  },
  {
    description: 'ValidatingWebhookConfiguration describes the admission webhooks that may accept or reject an object.',
  },
);
/** A ValidatingWebhookConfiguration object in its JSON form. */
export type ValidatingWebhookConfiguration = Static<typeof ValidatingWebhookConfigurationSchema>;

/** The defaults that differ between the versions of a webhook. */
export interface WebhookDefaults {
  failurePolicy: (typeof FAILURE_POLICY)[number];
  matchPolicy: (typeof MATCH_POLICY)[number];
  timeoutSeconds: number;
  /** Unset: required (v1). */
  sideEffects?: (typeof SIDE_EFFECTS)[number];
  /** Unset: required (v1). */
  admissionReviewVersions?: string[];
}

/** The fields every version's defaults fill in. */
interface DefaultedWebhook {
  failurePolicy?: string | null;
  matchPolicy?: string | null;
  namespaceSelector?: object;
  objectSelector?: object;
  timeoutSeconds?: number | null;
  sideEffects?: string | null;
  admissionReviewVersions?: string[];
  rules?: { scope?: string | null }[];
  clientConfig?: { service?: { port?: number | null } };
}

/**
 * Kubernetes 1.21's defaults of a webhook in a version (SetDefaults_ValidatingWebhook / _MutatingWebhook / _Rule /
 * _ServiceReference of `admissionregistration/<version>/defaults.go`). Mutates `w`.
 */
export function defaultWebhook(w: DefaultedWebhook, d: WebhookDefaults): void {
  w.failurePolicy ??= d.failurePolicy;
  w.matchPolicy ??= d.matchPolicy;
  w.namespaceSelector ??= {};
  w.objectSelector ??= {};
  if (d.sideEffects) w.sideEffects ??= d.sideEffects;
  w.timeoutSeconds ??= d.timeoutSeconds;
  if (d.admissionReviewVersions && !w.admissionReviewVersions?.length)
    w.admissionReviewVersions = [...d.admissionReviewVersions];
  for (const r of w.rules ?? []) r.scope ??= '*';
  if (w.clientConfig?.service) w.clientConfig.service.port ??= 443;
}

/** v1's defaults. */
const V1_DEFAULTS: WebhookDefaults = { failurePolicy: 'Fail', matchPolicy: 'Equivalent', timeoutSeconds: 10 };

/** The Webhooks column of both configurations, in every version. */
export const WEBHOOKS_COLUMN: TableColumn<{ webhooks?: unknown[] }> = {
  name: 'Webhooks',
  type: 'integer',
  description: 'The number of webhooks.',
  cell: (o: { webhooks?: unknown[] }) => o.webhooks?.length ?? 0,
};

/** The MutatingWebhookConfiguration kind. */
export const MutatingWebhookConfigurationKind = defineKind({
  group: ADMISSION_REGISTRATION_GROUP,
  version: 'v1',
  kind: 'MutatingWebhookConfiguration',
  plural: 'mutatingwebhookconfigurations',
  categories: ['api-extensions'],
  scope: 'Cluster',
  schema: MutatingWebhookConfigurationSchema,
  defaults(c) {
    for (const w of c.webhooks ?? []) {
      defaultWebhook(w, V1_DEFAULTS);
      w.reinvocationPolicy ??= 'Never';
    }
  },
  columns: [WEBHOOKS_COLUMN, AGE_COLUMN],
});

/** The ValidatingWebhookConfiguration kind. */
export const ValidatingWebhookConfigurationKind = defineKind({
  group: ADMISSION_REGISTRATION_GROUP,
  version: 'v1',
  kind: 'ValidatingWebhookConfiguration',
  plural: 'validatingwebhookconfigurations',
  categories: ['api-extensions'],
  scope: 'Cluster',
  schema: ValidatingWebhookConfigurationSchema,
  defaults(c) {
    for (const w of c.webhooks ?? []) defaultWebhook(w, V1_DEFAULTS);
  },
  columns: [WEBHOOKS_COLUMN, AGE_COLUMN],
});
