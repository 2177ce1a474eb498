/**
 * Label set utilities (apimachinery `pkg/labels/labels.go` and Kubernetes `pkg/util/labels`): print,
 * merge and compare label maps, and add a label to a map or a `LabelSelector` without mutating the
 * input (what the deployment controller does with `pod-template-hash`).
 */
import { type LabelSelector } from './label-selector';
import { LabelSelectorParseError, newRequirement, type Labels } from './selector';

/** `k1=v1,k2=v2` with keys sorted, or `<none>` for an empty set (`labels.FormatLabels`, kubectl's column). */
export function formatLabels(labels: Labels | undefined): string {
  const s = labelsToString(labels);
  return s.length === 0 ? '<none>' : s;
}

/** `k1=v1,k2=v2` with keys sorted; `''` for an empty set (`labels.Set.String()`). */
export function labelsToString(labels: Labels | undefined): string {
  if (labels === undefined || labels === null) return '';
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}=${labels[k] as string}`)
    .join(',');
}

/** A new map with the labels of both; on a shared key, `b` wins (`labels.Merge`). */
export function mergeLabels(a: Labels | undefined, b: Labels | undefined): Record<string, string> {
  return { ...(a ?? {}), ...(b ?? {}) };
}

/** True when some key is in both sets with different values (`labels.Conflicts`). */
export function labelsConflict(a: Labels | undefined, b: Labels | undefined): boolean {
  if (!a || !b) return false;
  const [small, big] = Object.keys(a).length <= Object.keys(b).length ? [a, b] : [b, a];
  for (const k of Object.keys(small)) {
    if (Object.prototype.hasOwnProperty.call(big, k) && big[k] !== small[k]) return true;
  }
  return false;
}

/** True when both sets have exactly the same keys and values (`labels.Equals`); absent equals empty. */
export function labelsEqual(a: Labels | undefined, b: Labels | undefined): boolean {
  const ka = Object.keys(a ?? {});
  const kb = Object.keys(b ?? {});
  if (ka.length !== kb.length) return false;
  return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && (b as Labels)[k] === (a as Labels)[k]);
}

/** A copy of `labels` with `key=value` set; the input itself when `key` is empty (`CloneAndAddLabel`). */
export function cloneAndAddLabel(labels: Labels | undefined, key: string, value: string): Record<string, string> {
  if (key === '') return { ...(labels ?? {}) };
  return { ...(labels ?? {}), [key]: value };
}

/** A copy of `labels` without `key` (`CloneAndRemoveLabel`). */
export function cloneAndRemoveLabel(labels: Labels | undefined, key: string): Record<string, string> {
  const out = { ...(labels ?? {}) };
  delete out[key];
  return out;
}

/**
 * A deep copy of a `LabelSelector` with `key=value` added to `matchLabels`
 * (`CloneSelectorAndAddLabel`); an empty `key` just copies.
 */
export function cloneSelectorAndAddLabel(
  selector: LabelSelector | undefined,
  key: string,
  value: string,
): LabelSelector {
  const out: LabelSelector = structuredClone(selector ?? {});
  if (key === '') return out;
  out.matchLabels = { ...(out.matchLabels ?? {}), [key]: value };
  return out;
}

/** True when the selector's `matchLabels` has `key` (`SelectorHasLabel`). */
export function selectorHasLabel(selector: LabelSelector | undefined, key: string): boolean {
  const ml = selector?.matchLabels;
  return ml !== undefined && ml !== null && Object.prototype.hasOwnProperty.call(ml, key);
}

/**
 * Parses `k1=v1,k2=v2` into a label map, validating keys and values (Kubernetes'
 * `ConvertSelectorToLabelsMap`, used for `--node-labels`); spaces around keys and values are
 * trimmed, `''` gives `{}`. Throws `LabelSelectorParseError`: `invalid selector: [a b c]` for a term
 * that is not one `key=value`, or the key/value message of `newRequirement`.
 */
export function convertSelectorToLabelsMap(selector: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (selector.length === 0) return out;
  for (const term of selector.split(',')) {
    const parts = term.split('=');
    if (parts.length !== 2) throw new LabelSelectorParseError(`invalid selector: [${parts.join(' ')}]`);
    const key = (parts[0] as string).trim();
    const value = (parts[1] as string).trim();
    newRequirement(key, '=', [value]); // validates key and value with Kubernetes' messages
    out[key] = value;
  }
  return out;
}

/**
 * True when every label of `labels` appears with the same value in `allowList`; an empty allow-list
 * allows everything (Kubernetes' `AreLabelsInWhiteList`, used by the PodNodeSelector admission plugin).
 */
export function labelsInAllowList(labels: Labels | undefined, allowList: Labels | undefined): boolean {
  if (!allowList || Object.keys(allowList).length === 0) return true;
  for (const k of Object.keys(labels ?? {})) {
    if (!Object.prototype.hasOwnProperty.call(allowList, k) || allowList[k] !== (labels as Labels)[k]) return false;
  }
  return true;
}
