/**
 * admissionregistration.platform/v1beta1: MutatingWebhookConfiguration and ValidatingWebhookConfiguration with v1's
 * fields and Protobuf numbers, and v1beta1's defaults (Kubernetes 1.21 `admissionregistration/v1beta1/defaults.go`):
 * failurePolicy Ignore, matchPolicy Exact, sideEffects Unknown, timeoutSeconds 30, admissionReviewVersions
 * [v1beta1], so `sideEffects` and `admissionReviewVersions` are optional here. Both versions share one storage
 * (no conversion: an object written in one reads in the other with the values it was written with), and the
 * validation differences of v1beta1 are the strategy's (`registry/admissionregistration`).
 */
import { type Static } from '@sinclair/typebox';

import { schemaInVersion } from '../../../schema/retarget';
import { object, opt, ptr, ref, t } from '../../../schema/schema';
import { defineKind, OBJECT_HEAD, schemaPrefix } from '../../../scheme/kind';
import { AGE_COLUMN } from '../../../table/table';
import {
  ADMISSION_REGISTRATION_GROUP,
  defaultWebhook,
  FAILURE_POLICY,
  MATCH_POLICY,
  MutatingWebhookConfigurationKind,
  MutatingWebhookSchema,
  RuleWithOperationsSchema,
  SIDE_EFFECTS,
  ValidatingWebhookConfigurationKind,
  WebhookClientConfigSchema,
  type WebhookDefaults,
  webhookProps,
  WEBHOOKS_COLUMN,
} from '../v1/webhook';

const V1 = schemaPrefix(ADMISSION_REGISTRATION_GROUP, 'v1');
const P = schemaPrefix(ADMISSION_REGISTRATION_GROUP, 'v1beta1');

/** v1beta1's defaults of a webhook. */
export const V1BETA1_WEBHOOK_DEFAULTS: WebhookDefaults = {
  failurePolicy: 'Ignore',
  matchPolicy: 'Exact',
  timeoutSeconds: 30,
  sideEffects: 'Unknown',
  admissionReviewVersions: ['v1beta1'],
};

/** A webhook's fields in v1beta1: v1's, with v1beta1's defaults and its two optional fields. */
function betaWebhookProps(objectSelectorProto: number) {
  return {
    ...webhookProps(objectSelectorProto, {
      clientConfig: schemaInVersion(WebhookClientConfigSchema, V1, P),
      rule: schemaInVersion(RuleWithOperationsSchema, V1, P),
    }),
    failurePolicy: opt(
      4,
      ptr(t.enumOf(FAILURE_POLICY)),
      'What an error calling the webhook does: Ignore (default) or Fail.',
    ),
    matchPolicy: opt(
      9,
      ptr(t.enumOf(MATCH_POLICY)),
      'Exact (default), or Equivalent: also requests on another version of a matched resource.',
    ),
    sideEffects: opt(6, ptr(t.enumOf(SIDE_EFFECTS)), 'Unknown (default), None, Some or NoneOnDryRun.'),
    timeoutSeconds: opt(7, ptr(t.int32()), 'Time-out of a call, 1 to 30 seconds; 30 by default.'),
    admissionReviewVersions: opt(
      8,
      t.array(t.string()),
      'AdmissionReview versions the webhook accepts, preferred first; [v1beta1] by default.',
    ),
  };
}

const MutatingWebhook = object(`${P}MutatingWebhook`, {
  ...betaWebhookProps(11),
  reinvocationPolicy: MutatingWebhookSchema.properties.reinvocationPolicy,
});
const ValidatingWebhook = object(`${P}ValidatingWebhook`, betaWebhookProps(10));

/** MutatingWebhookConfiguration in v1beta1, as in Kubernetes 1.21. */
export const MutatingWebhookConfigurationV1beta1Schema = object(
  `${P}MutatingWebhookConfiguration`,
  {
    ...OBJECT_HEAD,
    webhooks: opt(2, t.array(ref(MutatingWebhook), { patchMergeKey: 'name', patchStrategy: 'merge' }), 'The webhooks.'),
  },
  { description: 'MutatingWebhookConfiguration describes the admission webhooks that may change an object.' },
);
/** A v1beta1 MutatingWebhookConfiguration in its JSON form. */
export type MutatingWebhookConfigurationV1beta1 = Static<typeof MutatingWebhookConfigurationV1beta1Schema>;

/** ValidatingWebhookConfiguration in v1beta1, as in Kubernetes 1.21. */
export const ValidatingWebhookConfigurationV1beta1Schema = object(
  `${P}ValidatingWebhookConfiguration`,
  {
    ...OBJECT_HEAD,
    webhooks: opt(
      2,
      t.array(ref(ValidatingWebhook), { patchMergeKey: 'name', patchStrategy: 'merge' }),
      'The webhooks.',
    ),
  },
  {
    description: 'ValidatingWebhookConfiguration describes the admission webhooks that may accept or reject an object.',
  },
);

/** The MutatingWebhookConfiguration kind in v1beta1. */
export const MutatingWebhookConfigurationV1beta1Kind = defineKind({
  ...MutatingWebhookConfigurationKind.spec,
  version: 'v1beta1',
  schema: MutatingWebhookConfigurationV1beta1Schema,
  defaults(c) {
    for (const w of c.webhooks ?? []) {
      defaultWebhook(w, V1BETA1_WEBHOOK_DEFAULTS);
      w.reinvocationPolicy ??= 'Never';
    }
  },
  columns: [WEBHOOKS_COLUMN, AGE_COLUMN],
  fields: {},
});

/** The ValidatingWebhookConfiguration kind in v1beta1. */
export const ValidatingWebhookConfigurationV1beta1Kind = defineKind({
  ...ValidatingWebhookConfigurationKind.spec,
  version: 'v1beta1',
  schema: ValidatingWebhookConfigurationV1beta1Schema,
  defaults(c) {
    for (const w of c.webhooks ?? []) defaultWebhook(w, V1BETA1_WEBHOOK_DEFAULTS);
  },
  columns: [WEBHOOKS_COLUMN, AGE_COLUMN],
  fields: {},
});
