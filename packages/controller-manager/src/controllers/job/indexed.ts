/**
 * Indexed completion of Jobs (model: Kubernetes 1.21 `pkg/controller/job/indexed_job_utils.go`, gate IndexedJob):
 * each pod carries its completion index in an annotation, the job completes when every index in
 * `[0, completions)` has a succeeded pod, and `status.completedIndexes` lists them as `1,3-5`.
 */
import { type Job, type Pod } from '@platform/api';

/** The annotation holding a pod's completion index. */
export const COMPLETION_INDEX_ANNOTATION = 'batch.kubernetes.io/job-completion-index';
/** The environment variable every container of an Indexed job's pod gets its index in. */
export const COMPLETION_INDEX_ENV = 'JOB_COMPLETION_INDEX';

/** Whether the job uses Indexed completion. */
export function isIndexedJob(job: Job): boolean {
  return job.spec?.completionMode === 'Indexed';
}

/** The pod's completion index, or undefined when absent or not a valid index below `completions`. */
export function completionIndex(pod: Pod, completions: number): number | undefined {
  const v = pod.metadata?.annotations?.[COMPLETION_INDEX_ANNOTATION];
  if (v === undefined || !/^(0|[1-9][0-9]*)$/.test(v)) return undefined;
  const i = Number(v);
  return i < completions ? i : undefined;
}

/** The distinct valid indexes of succeeded pods, ascending. */
export function succeededIndexes(pods: readonly Pod[], completions: number): number[] {
  const s = new Set<number>();
  for (const p of pods) {
    if (p.status?.phase !== 'Succeeded') continue;
    const i = completionIndex(p, completions);
    if (i !== undefined) s.add(i);
  }
  return [...s].sort((a, b) => a - b);
}

/** `1,3-5,7`: ascending indexes as intervals. */
export function formatIndexes(ix: readonly number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < ix.length;) {
    let j = i;
    while (j + 1 < ix.length && ix[j + 1] === (ix[j] as number) + 1) j++;
    parts.push(i === j ? String(ix[i]) : `${ix[i]}-${ix[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}

/** The `count` smallest indexes below `completions` that neither an active pod nor a succeeded pod holds. */
export function firstPendingIndexes(
  active: readonly Pod[],
  succeeded: readonly number[],
  count: number,
  completions: number,
): number[] {
  const taken = new Set(succeeded);
  for (const p of active) {
    const i = completionIndex(p, completions);
    if (i !== undefined) taken.add(i);
  }
  const out: number[] = [];
  for (let i = 0; i < completions && out.length < count; i++) if (!taken.has(i)) out.push(i);
  return out;
}

/**
 * Active pods to remove first: those without a valid index, those whose index already succeeded, and all but one
 * of the pods sharing an index (`appendDuplicatedIndexPodsForRemoval`).
 */
export function redundantIndexedPods(active: readonly Pod[], succeeded: readonly number[], completions: number): Pod[] {
  const done = new Set(succeeded);
  const seen = new Set<number>();
  const out: Pod[] = [];
  for (const p of active) {
    const i = completionIndex(p, completions);
    if (i === undefined || done.has(i) || seen.has(i)) out.push(p);
    else seen.add(i);
  }
  return out;
}

/** Marks a new pod with its index: the annotation, and `JOB_COMPLETION_INDEX` from it in every container. */
export function addCompletionIndex(pod: Pod, index: number): void {
  const meta = (pod.metadata ??= {});
  meta.annotations = { ...meta.annotations, [COMPLETION_INDEX_ANNOTATION]: String(index) };
  const env = {
    name: COMPLETION_INDEX_ENV,
    valueFrom: { fieldRef: { fieldPath: `metadata.annotations['${COMPLETION_INDEX_ANNOTATION}']` } },
  };
  for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
    if (c.env?.some((e) => e.name === COMPLETION_INDEX_ENV)) continue;
    c.env = [...(c.env ?? []), env];
  }
}
