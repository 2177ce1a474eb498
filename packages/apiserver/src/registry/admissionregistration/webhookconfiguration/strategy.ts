/**
 * The strategies of MutatingWebhookConfiguration and ValidatingWebhookConfiguration (model: Kubernetes 1.21
 * `pkg/apis/admissionregistration/validation`): webhook names are qualified names of at least three DNS labels; a
 * webhook is reached by exactly one of an `https` URL and a service; `timeoutSeconds` is 1 to 30;
 * `admissionReviewVersions` are DNS labels, one of them v1 or v1beta1; rules name their operations, groups, versions
 * and resources, with `*` only on its own.
 *
 * Three rules depend on the version of the request, as in 1.21: in v1, webhook names are unique in their
 * configuration and `sideEffects` is None or NoneOnDryRun; v1beta1 allows duplicate names and every side-effect
 * class. An update keeps what the stored object already broke: a rule is only enforced when the old object met
 * it (so a v1 client can update an object a v1beta1 client wrote with `sideEffects: Unknown`).
 */
import {
  type FieldError,
  FieldPath,
  field,
  isDNS1035Label,
  type Kind,
  type MutatingWebhook,
  type MutatingWebhookConfiguration,
  type RuleWithOperations,
  validateLabelSelector,
  type ValidatingWebhook,
  type WebhookClientConfig,
} from '@platform/api';

import { defaultStrategy } from '../../generic/default-strategy';
import { type CreateStrategy, type UpdateStrategy } from '../../rest/rest';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const ACCEPTED_REVIEW_VERSIONS = ['v1', 'v1beta1'];
const NO_SIDE_EFFECTS = ['None', 'NoneOnDryRun'];
const SIDE_EFFECT_CLASSES = ['None', 'NoneOnDryRun', 'Some', 'Unknown'];

/** What a validation enforces (1.21's `validationOptions`). */
export interface WebhookValidationOptions {
  /** `sideEffects` must be None or NoneOnDryRun (v1), instead of any class. */
  requireNoSideEffects: boolean;
  /** One of `admissionReviewVersions` must be a version the server sends. */
  requireRecognizedAdmissionReviewVersion: boolean;
  /** Webhook names are unique within the configuration (v1). */
  requireUniqueWebhookNames: boolean;
}

type AnyWebhook = MutatingWebhook | ValidatingWebhook;

function validateWebhookName(name: string | undefined, path: FieldPath): FieldError[] {
  if (!name) return [field.required(path)];
  const labels = name.split('.');
  if (labels.length < 3) {
    return [field.invalid(path, name, 'should be a domain with at least three segments separated by dots')];
  }
  if (name.length > 253 || !labels.every((l) => l.length <= 63 && DNS_LABEL.test(l))) {
    return [
      field.invalid(
        path,
        name,
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
      ),
    ];
  }
  return [];
}

/** Checks a webhook's client configuration (exported for the webhook client, which relies on it). */
export function validateClientConfig(c: WebhookClientConfig | undefined, path: FieldPath): FieldError[] {
  if (!c) return [field.required(path)];
  const errs: FieldError[] = [];
  if (c.url && c.service) errs.push(field.required(path, 'exactly one of url or service is required'));
  else if (!c.url && !c.service) errs.push(field.required(path, 'exactly one of url or service is required'));
  if (c.url) {
    const p = path.child('url');
    let u: URL | undefined;
    try {
      u = new URL(c.url);
    } catch {
      errs.push(field.invalid(p, c.url, 'host must be specified'));
    }
    if (u) {
      if (u.protocol !== 'https:') errs.push(field.invalid(p, c.url, "'https' is the only allowed URL scheme"));
      if (!u.hostname) errs.push(field.invalid(p, c.url, 'host must be specified'));
      if (u.username || u.password) errs.push(field.invalid(p, c.url, 'user information is not permitted in the URL'));
      if (u.hash || c.url.includes('#')) errs.push(field.invalid(p, c.url, 'fragments are not permitted in the URL'));
      if (u.search || c.url.includes('?'))
        errs.push(field.invalid(p, c.url, 'query parameters are not permitted in the URL'));
    }
  }
  if (c.service) {
    const p = path.child('service');
    if (!c.service.name) errs.push(field.required(p.child('name'), 'service name is required'));
    if (!c.service.namespace) errs.push(field.required(p.child('namespace'), 'service namespace is required'));
    if (c.service.path !== undefined && c.service.path !== '' && !c.service.path.startsWith('/')) {
      errs.push(field.invalid(p.child('path'), c.service.path, "must start with a '/'"));
    }
    const port = c.service.port;
    if (port !== undefined && (port < 1 || port > 65535)) {
      errs.push(field.invalid(p.child('port'), port, 'port is not valid: must be between 1 and 65535, inclusive'));
    }
  }
  if (c.caBundle !== undefined && !/^[A-Za-z0-9+/]*={0,2}$/.test(c.caBundle)) {
    errs.push(field.invalid(path.child('caBundle'), '<bytes>', 'must be base64 encoded'));
  }
  return errs;
}

function validateStarList(values: string[] | undefined, path: FieldPath, what: string): FieldError[] {
  if (!values || values.length === 0) return [field.required(path)];
  const errs: FieldError[] = [];
  if (values.includes('*') && values.length > 1) {
    errs.push(field.invalid(path, values, `if '*' is present, must not specify other ${what}`));
  }
  values.forEach((v, i) => {
    if (v === '' && what !== 'API groups') errs.push(field.required(path.index(i)));
  });
  return errs;
}

function validateResources(resources: string[] | undefined, path: FieldPath): FieldError[] {
  if (!resources || resources.length === 0) return [field.required(path)];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  const hasAll = resources.includes('*') || resources.includes('*/*');
  resources.forEach((r, i) => {
    const p = path.index(i);
    if (!r) {
      errs.push(field.required(p));
      return;
    }
    const parts = r.split('/');
    if (parts.length > 2 || parts.some((x) => x === '')) {
      errs.push(field.invalid(p, r, 'resource and subresource must be non-empty'));
      return;
    }
    if (seen.has(r)) errs.push(field.duplicate(p, r));
    seen.add(r);
    if (hasAll && resources.length > 1 && (r === '*' || r === '*/*')) {
      errs.push(field.invalid(p, r, "if '*' or '*/*' is present, must not specify other resources"));
    }
  });
  return errs;
}

function validateRule(rule: RuleWithOperations, path: FieldPath): FieldError[] {
  return [
    ...validateStarList(rule.operations, path.child('operations'), 'operations'),
    ...validateStarList(rule.apiGroups, path.child('apiGroups'), 'API groups'),
    ...validateStarList(rule.apiVersions, path.child('apiVersions'), 'API versions'),
    ...validateResources(rule.resources, path.child('resources')),
  ];
}

function validateWebhook(w: AnyWebhook, path: FieldPath, o: WebhookValidationOptions): FieldError[] {
  const errs: FieldError[] = [...validateWebhookName(w.name, path.child('name'))];
  (w.rules ?? []).forEach((r, i) => errs.push(...validateRule(r, path.child('rules').index(i))));
  const sideEffects = o.requireNoSideEffects ? NO_SIDE_EFFECTS : SIDE_EFFECT_CLASSES;
  if (w.sideEffects === undefined || w.sideEffects === null) {
    errs.push(field.required(path.child('sideEffects'), `must specify one of ${sideEffects.join(', ')}`));
  } else if (!sideEffects.includes(w.sideEffects)) {
    errs.push(field.notSupported(path.child('sideEffects'), w.sideEffects, sideEffects));
  }
  if (w.timeoutSeconds !== undefined && (w.timeoutSeconds < 1 || w.timeoutSeconds > 30)) {
    errs.push(
      field.invalid(
        path.child('timeoutSeconds'),
        w.timeoutSeconds,
        'the timeout value must be between 1 and 30 seconds',
      ),
    );
  }
  const versions = w.admissionReviewVersions ?? [];
  const vp = path.child('admissionReviewVersions');
  if (versions.length === 0) {
    errs.push(field.required(vp, `must specify one of ${ACCEPTED_REVIEW_VERSIONS.join(', ')}`));
  } else {
    const seen = new Set<string>();
    versions.forEach((v, i) => {
      if (seen.has(v)) {
        errs.push(field.invalid(vp.index(i), v, 'duplicate version'));
        return;
      }
      seen.add(v);
      for (const msg of isDNS1035Label(v)) errs.push(field.invalid(vp.index(i), v, msg));
    });
    if (o.requireRecognizedAdmissionReviewVersion && !versions.some((v) => ACCEPTED_REVIEW_VERSIONS.includes(v))) {
      errs.push(field.invalid(vp, versions, `must include at least one of ${ACCEPTED_REVIEW_VERSIONS.join(', ')}`));
    }
  }
  errs.push(...validateLabelSelector(w.namespaceSelector, path.child('namespaceSelector')));
  errs.push(...validateLabelSelector(w.objectSelector, path.child('objectSelector')));
  errs.push(...validateClientConfig(w.clientConfig, path.child('clientConfig')));
  return errs;
}

/** The options of a create in the request's version (1.21: v1 is strict, v1beta1 is not). */
export function createValidationOptions(version: string): WebhookValidationOptions {
  const strict = version !== 'v1beta1';
  return {
    requireNoSideEffects: strict,
    requireRecognizedAdmissionReviewVersion: true,
    requireUniqueWebhookNames: strict,
  };
}

/** The options of an update: a rule of the version holds only when the old webhooks met it (1.21). */
export function updateValidationOptions(version: string, old: AnyWebhook[]): WebhookValidationOptions {
  const strict = createValidationOptions(version);
  const names = old.map((w) => w.name);
  return {
    requireNoSideEffects:
      strict.requireNoSideEffects && old.every((w) => NO_SIDE_EFFECTS.includes(w.sideEffects ?? '')),
    requireRecognizedAdmissionReviewVersion: old.every((w) =>
      (w.admissionReviewVersions ?? []).some((v) => ACCEPTED_REVIEW_VERSIONS.includes(v)),
    ),
    requireUniqueWebhookNames: strict.requireUniqueWebhookNames && new Set(names).size === names.length,
  };
}

/** Validation of a webhook configuration of either kind, with v1's rules unless `o` says otherwise. */
export function validateWebhookConfiguration(
  c: { webhooks?: AnyWebhook[] },
  o: WebhookValidationOptions = createValidationOptions('v1'),
): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  (c.webhooks ?? []).forEach((w, i) => {
    const p = new FieldPath('webhooks').index(i);
    errs.push(...validateWebhook(w, p, o));
    if (w.name && o.requireUniqueWebhookNames) {
      if (names.has(w.name)) errs.push(field.duplicate(p.child('name'), w.name));
      names.add(w.name);
    }
  });
  return errs;
}

/**
 * The strategy of `mutatingwebhookconfigurations` and `validatingwebhookconfigurations` in the version of `kind`
 * (the version of the request: each served version installs its own strategy).
 */
export function webhookConfigurationStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  const webhooks = (obj: unknown): AnyWebhook[] => (obj as MutatingWebhookConfiguration).webhooks ?? [];
  return defaultStrategy(kind, {
    validate: (_ctx, obj) =>
      validateWebhookConfiguration({ webhooks: webhooks(obj) }, createValidationOptions(kind.version)),
    validateUpdate: (_ctx, obj, old) =>
      validateWebhookConfiguration({ webhooks: webhooks(obj) }, updateValidationOptions(kind.version, webhooks(old))),
  });
}
