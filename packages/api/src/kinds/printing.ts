/**
 * Helpers of the per-kind table columns, after Kubernetes' `pkg/printers/internalversion/printers.go`: label and
 * selector formatting, the wide `Containers`/`Images`/`Selector` columns of workloads, ages of optional times.
 */
import { type LabelSelector } from '../meta/v1/types';
import { type TableColumn } from '../table/table';
import { type PodTemplateSpec } from './core/v1/types';

/** `k1=v1,k2=v2` sorted by key (`labels.FormatLabels`), `<none>` when empty. */
export function formatLabels(labels: Record<string, string> | undefined): string {
  const keys = Object.keys(labels ?? {}).sort();
  if (keys.length === 0) return '<none>';
  return keys.map((k) => `${k}=${(labels as Record<string, string>)[k]}`).join(',');
}

/**
 * A label selector as `labels.Selector.String()` writes it: requirements sorted by key, `k=v`, `k in (a,b)`,
 * `k notin (a,b)`, `k`, `!k`; `''` for an empty or missing selector.
 */
export function selectorString(selector: LabelSelector | undefined): string {
  if (!selector) return '';
  const parts: { key: string; text: string }[] = [];
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) parts.push({ key, text: `${key}=${value}` });
  for (const e of selector.matchExpressions ?? []) {
    const values = [...(e.values ?? [])].sort().join(',');
    const text =
      e.operator === 'In'
        ? `${e.key} in (${values})`
        : e.operator === 'NotIn'
          ? `${e.key} notin (${values})`
          : e.operator === 'Exists'
            ? e.key
            : `!${e.key}`;
    parts.push({ key: e.key, text });
  }
  parts.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return parts.map((p) => p.text).join(',');
}

/** `metav1.FormatLabelSelector`: like {@link selectorString}, `<none>` when that is empty. */
export function formatLabelSelector(selector: LabelSelector | undefined): string {
  return selectorString(selector) || '<none>';
}

/** `True`/`False` of an optional boolean, `<unset>` when unset (`printBoolPtr`). */
export function boolPtr(v: boolean | undefined): string {
  return v === undefined ? '<unset>' : v ? 'True' : 'False';
}

/**
 * The wide `Containers`, `Images` and `Selector` columns of a workload, read through `template` and `selector`.
 * `formatSelector` picks the formatting Kubernetes uses for that kind.
 */
export function workloadWideColumns<T>(
  template: (o: T) => PodTemplateSpec | undefined,
  selector: (o: T) => LabelSelector | undefined,
  formatSelector: (s: LabelSelector | undefined) => string = selectorString,
): TableColumn<T>[] {
  return [
    {
      name: 'Containers',
      type: 'string',
      priority: 1,
      description: 'Names of each container in the template.',
      cell: (o) => (template(o)?.spec?.containers ?? []).map((c) => c.name).join(','),
    },
    {
      name: 'Images',
      type: 'string',
      priority: 1,
      description: 'Images referenced by each container in the template.',
      cell: (o) => (template(o)?.spec?.containers ?? []).map((c) => c.image ?? '').join(','),
    },
    {
      name: 'Selector',
      type: 'string',
      priority: 1,
      description: 'Selector of the pods.',
      cell: (o) => formatSelector(selector(o)),
    },
  ];
}
