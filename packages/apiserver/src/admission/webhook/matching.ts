/**
 * Which webhooks a request reaches (model: apiserver `pkg/admission/plugin/webhook/predicates` and
 * `pkg/admission/plugin/webhook/generic/webhook.go`): a rule matches the operation, group, version, resource
 * (`pods`, `pods/*`, `*\/scale`, `*`, `*\/*`) and scope; then the namespace selector (on the labels of the request's
 * namespace, or of the namespace itself when the object is one) and the object selector (on the labels of the new or
 * the old object) must match. Requests on the webhook configurations themselves never reach a webhook, so a broken
 * webhook can always be removed.
 */
import { type ApiObject, matchesLabelSelector, type MutatingWebhook, type ValidatingWebhook } from '@platform/api';

import { type AdmissionAttributes } from '../interfaces';

type Webhook = MutatingWebhook | ValidatingWebhook;
type Rule = NonNullable<Webhook['rules']>[number];

function listMatches(list: readonly string[] | undefined, value: string): boolean {
  return (list ?? []).some((v) => v === '*' || v === value);
}

function resourceMatches(patterns: readonly string[] | undefined, resource: string, subresource: string): boolean {
  return (patterns ?? []).some((p) => {
    const [r, sub] = p.split('/') as [string, string | undefined];
    if (sub === undefined) return subresource === '' && (r === '*' || r === resource);
    return (r === '*' || r === resource) && (sub === '*' || sub === subresource);
  });
}

/** Whether one rule matches the request (`ignoreVersion`: matchPolicy Equivalent across versions of a resource). */
export function ruleMatches(rule: Rule, a: AdmissionAttributes, ignoreVersion = false): boolean {
  if (!listMatches(rule.operations, a.operation)) return false;
  if (!listMatches(rule.apiGroups, a.resource.group)) return false;
  if (!ignoreVersion && !listMatches(rule.apiVersions, a.resource.version)) return false;
  if (!resourceMatches(rule.resources, a.resource.resource, a.subresource)) return false;
  const scope = rule.scope ?? '*';
  if (scope === 'Cluster' && a.namespace !== '') return false;
  if (scope === 'Namespaced' && a.namespace === '') return false;
  return true;
}

/** Whether any rule of a webhook matches the request. */
export function rulesMatch(w: Webhook, a: AdmissionAttributes): boolean {
  const equivalent = (w.matchPolicy ?? 'Equivalent') === 'Equivalent';
  return (w.rules ?? []).some((r) => ruleMatches(r, a) || (equivalent && ruleMatches(r, a, true)));
}

/** Whether the webhook configurations themselves are the subject (never sent to webhooks). */
export function isExempt(a: AdmissionAttributes): boolean {
  return (
    a.resource.group === 'admissionregistration.platform' &&
    (a.resource.resource === 'mutatingwebhookconfigurations' ||
      a.resource.resource === 'validatingwebhookconfigurations')
  );
}

/** Whether the object selector matches the new or the old object. */
export function objectSelectorMatches(w: Webhook, a: AdmissionAttributes): boolean {
  const sel = w.objectSelector;
  if (!sel || (!sel.matchLabels && !sel.matchExpressions?.length)) return true;
  const labels = (o: ApiObject | undefined): Record<string, string> => o?.metadata?.labels ?? {};
  return (
    (a.object !== undefined && matchesLabelSelector(sel, labels(a.object))) ||
    (a.oldObject !== undefined && matchesLabelSelector(sel, labels(a.oldObject)))
  );
}

/**
 * Whether the namespace selector matches; `namespaceLabels` reads the labels of the request's namespace. Requests
 * on cluster-scoped objects (other than namespaces) always match.
 */
export async function namespaceSelectorMatches(
  w: Webhook,
  a: AdmissionAttributes,
  namespaceLabels: (name: string) => Promise<Record<string, string>>,
): Promise<boolean> {
  const sel = w.namespaceSelector;
  if (!sel || (!sel.matchLabels && !sel.matchExpressions?.length)) return true;
  if (a.resource.group === '' && a.resource.resource === 'namespaces' && a.subresource === '') {
    const o = a.object ?? a.oldObject;
    return matchesLabelSelector(sel, o?.metadata?.labels ?? {});
  }
  if (!a.namespace) return true;
  return matchesLabelSelector(sel, await namespaceLabels(a.namespace));
}
