/**
 * DefaultPreemption (1.21 `defaultpreemption`): when no node fits, find nodes where evicting pods of lower
 * priority would let the pod fit, keep as few victims as possible (the most important are reprieved first, those
 * whose eviction would violate a PodDisruptionBudget before the others), pick the node with the fewest PDB
 * violations, then the lowest highest-victim priority, the lowest priority sum, the fewest victims, the latest
 * start of the highest victim; delete its victims, clear the nominations of lower-priority pods to it, and
 * nominate the pod there (`status.nominatedNodeName`). A pod with `preemptionPolicy: Never` never preempts.
 */
import { type LabelSelector, labelSelectorAsSelector, type Pod, type PodDisruptionBudget } from '@platform/api';

import { type NodeInfo, podKey } from '../../framework/node-info';
import {
  type CycleState,
  type FrameworkHandle,
  isSuccess,
  type NodeToStatus,
  type PluginFactory,
  type PostFilterPlugin,
  Status,
  unschedulable,
} from '../../framework/types';
import { podPriority } from '../helper/helper';

export const NAME = 'DefaultPreemption';

/** A node and the pods to evict there. */
export interface Candidate {
  name: string;
  victims: Pod[];
  numPDBViolations: number;
}

function startTime(p: Pod): number {
  const t = p.status?.startTime ?? p.metadata?.creationTimestamp;
  return t ? Date.parse(t) : 0;
}

/** More important first: higher priority, then earlier start. */
function moreImportant(a: Pod, b: Pod): number {
  const d = podPriority(b) - podPriority(a);
  return d !== 0 ? d : startTime(a) - startTime(b);
}

interface Budget {
  ns: string;
  selector: ReturnType<typeof labelSelectorAsSelector>;
  allowed: number;
}

/** Splits pods into those whose eviction violates a PDB and the rest (`filterPodsWithPDBViolation`). */
function splitByPDB(pods: Pod[], budgets: Budget[]): { violating: Pod[]; nonViolating: Pod[] } {
  const allowed = budgets.map((b) => b.allowed);
  const violating: Pod[] = [];
  const nonViolating: Pod[] = [];
  for (const p of pods) {
    let violates = false;
    budgets.forEach((b, i) => {
      if (b.ns !== (p.metadata?.namespace ?? 'default') || !b.selector.matches(p.metadata?.labels)) return;
      allowed[i] = (allowed[i] as number) - 1;
      if ((allowed[i] as number) < 0) violates = true;
    });
    (violates ? violating : nonViolating).push(p);
  }
  return { violating, nonViolating };
}

export class DefaultPreemption implements PostFilterPlugin {
  readonly name = NAME;
  /** Victims of the last preemption (metrics and tests). */
  lastVictims = 0;
  constructor(private readonly handle: FrameworkHandle) {}

  private budgets(): Budget[] {
    return (this.handle.lister('poddisruptionbudgets').list() as PodDisruptionBudget[]).map((b) => {
      let selector = labelSelectorAsSelector(undefined);
      try {
        selector = labelSelectorAsSelector(b.spec?.selector as LabelSelector | undefined);
      } catch {
        /* an invalid selector selects nothing */
      }
      return { ns: b.metadata?.namespace ?? 'default', selector, allowed: b.status?.disruptionsAllowed ?? 0 };
    });
  }

  /** Whether the pod may preempt at all (`PodEligibleToPreemptOthers`). */
  eligible(pod: Pod): boolean {
    if (pod.spec?.preemptionPolicy === 'Never') return false;
    const nominated = pod.status?.nominatedNodeName;
    if (nominated) {
      const node = this.handle.snapshot().get(nominated);
      // Victims of an earlier preemption are still terminating there: wait for them.
      if (node?.pods.some((p) => p.pod.metadata?.deletionTimestamp && podPriority(p.pod) < podPriority(pod)))
        return false;
    }
    return true;
  }

  /** The victims on one node, or undefined when evicting every lower-priority pod would not help. */
  selectVictimsOnNode(state: CycleState, pod: Pod, node: NodeInfo, budgets: Budget[]): Candidate | undefined {
    const fwk = this.handle.framework();
    const st = state.clone();
    const ni = node.clone();
    const prio = podPriority(pod);
    const potential: Pod[] = [];
    for (const p of node.pods)
      if (podPriority(p.pod) < prio) {
        potential.push(p.pod);
        ni.removePod(p.pod);
        if (!isSuccess(fwk.runPreFilterExtensionRemovePod(st, pod, p.pod, ni))) return undefined;
      }
    if (!potential.length) return undefined;
    if (!isSuccess(fwk.runFilterPluginsWithNominatedPods(st, pod, ni))) return undefined;
    potential.sort(moreImportant);
    const { violating, nonViolating } = splitByPDB(potential, budgets);
    const victims: Pod[] = [];
    let numPDBViolations = 0;
    const reprieve = (p: Pod): boolean => {
      ni.addPod(p);
      fwk.runPreFilterExtensionAddPod(st, pod, p, ni);
      if (isSuccess(fwk.runFilterPluginsWithNominatedPods(st, pod, ni))) return true;
      ni.removePod(p);
      fwk.runPreFilterExtensionRemovePod(st, pod, p, ni);
      victims.push(p);
      return false;
    };
    for (const p of violating) if (!reprieve(p)) numPDBViolations++;
    for (const p of nonViolating) reprieve(p);
    return { name: node.name, victims, numPDBViolations };
  }

  /** The best candidate (`pickOneNodeForPreemption`). */
  static pick(cands: Candidate[]): Candidate | undefined {
    let list = cands;
    const keepMin = (f: (c: Candidate) => number): void => {
      const m = Math.min(...list.map(f));
      list = list.filter((c) => f(c) === m);
    };
    if (!list.length) return undefined;
    const noVictims = list.find((c) => c.victims.length === 0);
    if (noVictims) return noVictims;
    keepMin((c) => c.numPDBViolations);
    keepMin((c) => Math.max(...c.victims.map(podPriority)));
    keepMin((c) => c.victims.reduce((s, p) => s + podPriority(p) + 2 ** 31, 0));
    keepMin((c) => c.victims.length);
    // The latest start time of the highest-priority victims.
    keepMin((c) => {
      const top = Math.max(...c.victims.map(podPriority));
      return -Math.min(...c.victims.filter((p) => podPriority(p) === top).map(startTime));
    });
    return list[0];
  }

  async postFilter(
    state: CycleState,
    pod: Pod,
    statuses: NodeToStatus,
  ): Promise<{ nominatedNodeName?: string; status?: Status }> {
    if (!this.eligible(pod)) return { status: unschedulable('pod is not eligible for preemption') };
    const snap = this.handle.snapshot();
    const budgets = this.budgets();
    const cands: Candidate[] = [];
    for (const node of snap.list()) {
      const s = statuses.get(node.name);
      if (s?.code === 'UnschedulableAndUnresolvable') continue;
      const c = this.selectVictimsOnNode(state, pod, node, budgets);
      if (c) cands.push(c);
    }
    let accepted: Map<string, { pods: Pod[]; numPDBViolations: number }>;
    try {
      accepted = await this.handle.preemptionExtenders(
        pod,
        new Map(cands.map((c) => [c.name, { pods: c.victims, numPDBViolations: c.numPDBViolations }])),
      );
    } catch (err) {
      return { status: new Status('Error', [String((err as Error).message ?? err)]) };
    }
    const best = DefaultPreemption.pick(
      [...accepted].map(([name, v]) => ({ name, victims: v.pods, numPDBViolations: v.numPDBViolations })),
    );
    if (!best) return { status: unschedulable('no preemption victims found for incoming pod') };
    this.lastVictims = best.victims.length;
    // The victims are deleted `parallelism` at a time; the first failure fails the preemption.
    const queue = [...best.victims];
    let failed: Status | undefined;
    const worker = async (): Promise<void> => {
      for (let v = queue.shift(); v && !failed; v = queue.shift()) {
        try {
          await this.handle.deletePod(v);
          this.handle.event(v, 'Normal', 'Preempted', `Preempted by ${podKey(pod)} on node ${best.name}`);
        } catch (err) {
          failed = new Status('Error', [`deleting victim ${podKey(v)}: ${String(err)}`]);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, this.handle.parallelism ?? 16) }, worker));
    if (failed) return { status: failed };
    // Lower-priority pods nominated to the node lose their nomination.
    for (const p of this.handle.nominatedPodsForNode(best.name))
      if (podPriority(p) < podPriority(pod) && podKey(p) !== podKey(pod))
        await this.handle.setNominatedNode(p, '').catch(() => undefined);
    await this.handle.setNominatedNode(pod, best.name).catch(() => undefined);
    return { nominatedNodeName: best.name };
  }
}

export const factory: PluginFactory = (_a, handle) => new DefaultPreemption(handle);
