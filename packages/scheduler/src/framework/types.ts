/**
 * The scheduling framework's extension points as small interfaces (model: Kubernetes 1.21
 * `pkg/scheduler/framework/interface.go`). A plugin is an object with a `name` that implements any of them; the
 * framework finds out which by the methods it has. The scheduling cycle (queueSort … reserve/permit) is
 * synchronous and reads an immutable per-cycle snapshot; the binding cycle (preBind, bind, postBind) is async.
 */
import { type Node, type Pod } from '@platform/api';
import { type Clientset } from '@platform/client';

import { type NodeInfo } from './node-info';
import { type WaitingPod } from './waiting-pods';

/** Preemption victims on one node (`extenderv1.Victims`). */
export interface Victims {
  pods: Pod[];
  numPDBViolations: number;
}

/** The outcome of a plugin (Go's `framework.Code`). */
export type Code = 'Success' | 'Error' | 'Unschedulable' | 'UnschedulableAndUnresolvable' | 'Wait' | 'Skip';

/** A plugin's answer; `undefined` stands for Success everywhere a `Status` is returned. */
export class Status {
  /** The plugin that answered (set by the framework). */
  plugin = '';
  constructor(
    readonly code: Code,
    readonly reasons: readonly string[] = [],
  ) {}
  /** The reasons joined with ", " (the message of Events and conditions). */
  message(): string {
    return this.reasons.join(', ');
  }
  isUnschedulable(): boolean {
    return this.code === 'Unschedulable' || this.code === 'UnschedulableAndUnresolvable';
  }
}

/** `new Status('Unschedulable', reasons)`. */
export function unschedulable(...reasons: string[]): Status {
  return new Status('Unschedulable', reasons);
}
/** `new Status('UnschedulableAndUnresolvable', reasons)`: preemption on that node cannot help. */
export function unresolvable(...reasons: string[]): Status {
  return new Status('UnschedulableAndUnresolvable', reasons);
}
/** `new Status('Error', [message])`. */
export function errorStatus(err: unknown): Status {
  return new Status('Error', [err instanceof Error ? err.message : String(err)]);
}
/** True when `s` is success (`undefined` or code Success). */
export function isSuccess(s: Status | undefined): boolean {
  return !s || s.code === 'Success';
}

/** The highest score a Score plugin may give after normalization. */
export const MAX_NODE_SCORE = 100;
/** The lowest. */
export const MIN_NODE_SCORE = 0;

/** A node's score from one plugin. */
export interface NodeScore {
  name: string;
  score: number;
}

/** Data plugins keep for one scheduling cycle, by key (Go's `CycleState`). Cloned for preemption's what-ifs. */
export class CycleState {
  private readonly data = new Map<string, unknown>();
  /** Filter plugins whose PreFilter answered Skip. */
  readonly skipFilter = new Set<string>();
  /** Score plugins whose PreScore answered Skip. */
  readonly skipScore = new Set<string>();
  read<T>(key: string): T | undefined {
    return this.data.get(key) as T | undefined;
  }
  write(key: string, value: unknown): void {
    this.data.set(key, value);
  }
  /** A copy whose values are cloned when they have a `clone()` method. */
  clone(): CycleState {
    const c = new CycleState();
    for (const [k, v] of this.data) {
      const cl = (v as { clone?: () => unknown } | undefined)?.clone;
      c.data.set(k, typeof cl === 'function' ? cl.call(v) : v);
    }
    for (const s of this.skipFilter) c.skipFilter.add(s);
    for (const s of this.skipScore) c.skipScore.add(s);
    return c;
  }
}

/** What a plugin can see of the scheduler (Go's `framework.Handle`). */
export interface FrameworkHandle {
  /** The node snapshot of the current cycle. */
  snapshot(): SnapshotLister;
  /** The pods nominated to a node (preemptors waiting for their victims to go). */
  nominatedPodsForNode(nodeName: string): readonly Pod[];
  /** Delete a pod (preemption's victims). */
  deletePod(pod: Pod): Promise<void>;
  /** Set `status.nominatedNodeName` (empty clears it). */
  setNominatedNode(pod: Pod, nodeName: string): Promise<void>;
  /** Record an Event on an object. */
  event(obj: Pod, type: 'Normal' | 'Warning', reason: string, message: string): void;
  /** POST a Binding. */
  bind(pod: Pod, nodeName: string): Promise<void>;
  /** Read-only views of other cluster objects (pods, PVCs, PVs, PDBs, namespaces, storage classes, services). */
  lister(resource: string): { list(): unknown[]; get(key: string): unknown };
  /** The scheduler's client (Go's `Handle.ClientSet()`), for plugins that write other objects (VolumeBinding). */
  clientSet(): Clientset;
  /** Aborted when the scheduler stops: a binding cycle's long waits (VolumeBinding's PreBind) end with it. */
  readonly signal?: AbortSignal;
  /** The framework itself (preemption re-runs the filters). */
  framework(): FrameworkRunner;
  /** `--hard-pod-affinity-symmetric-weight`. */
  readonly hardPodAffinitySymmetricWeight?: number;
  /** `parallelism`: how many API calls a plugin may have in flight at once (preemption's deletions). */
  readonly parallelism?: number;
  /** The victims per node the preemption extenders accept of `candidates` (all of them without extenders). */
  preemptionExtenders(pod: Pod, candidates: ReadonlyMap<string, Victims>): Promise<Map<string, Victims>>;
  /** Calls `callback` on each pod of this profile waiting at Permit. */
  iterateOverWaitingPods(callback: (wp: WaitingPod) => void): void;
  /** The pod of `uid` waiting at Permit in this profile, if any. */
  getWaitingPod(uid: string): WaitingPod | undefined;
  /** Rejects the waiting pod of `uid`; true when there was one. */
  rejectWaitingPod(uid: string): boolean;
}

/** What the scheduler gives every profile; each profile's framework adds its waiting pods. */
export type SchedulerHandle = Omit<FrameworkHandle, 'iterateOverWaitingPods' | 'getWaitingPod' | 'rejectWaitingPod'>;

/** The node snapshot a cycle reads. */
export interface SnapshotLister {
  list(): readonly NodeInfo[];
  get(name: string): NodeInfo | undefined;
  /** Nodes with at least one pod that has (anti-)affinity. */
  havePodsWithAffinity(): readonly NodeInfo[];
  /** Nodes with at least one pod that has required anti-affinity. */
  havePodsWithRequiredAntiAffinity(): readonly NodeInfo[];
}

/** What preemption needs of the framework. */
export interface FrameworkRunner {
  runPreFilterExtensionAddPod(state: CycleState, pod: Pod, toAdd: Pod, node: NodeInfo): Status | undefined;
  runPreFilterExtensionRemovePod(state: CycleState, pod: Pod, toRemove: Pod, node: NodeInfo): Status | undefined;
  runFilterPlugins(state: CycleState, pod: Pod, node: NodeInfo): Status | undefined;
  /** Filters with the nominated pods of at least the pod's priority counted in (as the scheduling cycle does). */
  runFilterPluginsWithNominatedPods(state: CycleState, pod: Pod, node: NodeInfo): Status | undefined;
  readonly profileName: string;
}

/** Every plugin has a name, unique in a profile. */
export interface Plugin {
  readonly name: string;
}

/** A pod waiting in the queue, as the queue-sort plugin sees it. */
export interface QueuedPodInfo {
  pod: Pod;
  /** When it was last added to the queue (ms). */
  timestamp: number;
  /** Scheduling attempts so far. */
  attempts: number;
  /** When it was first added (ms); the e2e latency starts here. */
  initialAttemptTimestamp: number;
  /** The plugins that rejected it in its last attempt. */
  unschedulablePlugins: Set<string>;
}

/** Orders the active queue. */
export interface QueueSortPlugin extends Plugin {
  less(a: QueuedPodInfo, b: QueuedPodInfo): boolean;
}

/** What PreFilter may narrow the nodes to. */
export interface PreFilterResult {
  nodeNames?: Set<string>;
}

/** Runs once per cycle before the filters. */
export interface PreFilterPlugin extends Plugin {
  preFilter(state: CycleState, pod: Pod): Status | undefined;
  /** Keep the PreFilter state right when preemption adds or removes a pod on a node. */
  addPod?(state: CycleState, podToSchedule: Pod, podToAdd: Pod, node: NodeInfo): Status | undefined;
  removePod?(state: CycleState, podToSchedule: Pod, podToRemove: Pod, node: NodeInfo): Status | undefined;
}

/** Says whether the pod fits a node. */
export interface FilterPlugin extends Plugin {
  filter(state: CycleState, pod: Pod, node: NodeInfo): Status | undefined;
}

/** The nodes' statuses of a failed cycle. */
export type NodeToStatus = Map<string, Status>;

/** Runs when no node fits (preemption). */
export interface PostFilterPlugin extends Plugin {
  postFilter(
    state: CycleState,
    pod: Pod,
    statuses: NodeToStatus,
  ): Promise<{ nominatedNodeName?: string; status?: Status }>;
}

/** Runs once per cycle before scoring, with the feasible nodes. */
export interface PreScorePlugin extends Plugin {
  preScore(state: CycleState, pod: Pod, nodes: readonly NodeInfo[]): Status | undefined;
}

/** Ranks the feasible nodes. */
export interface ScorePlugin extends Plugin {
  score(state: CycleState, pod: Pod, node: NodeInfo): number;
  /** Brings the scores into [0, 100]. */
  normalizeScore?(state: CycleState, pod: Pod, scores: NodeScore[]): Status | undefined;
}

/** Reserves what the pod will use on its node; unreserve must be idempotent. */
export interface ReservePlugin extends Plugin {
  reserve(state: CycleState, pod: Pod, nodeName: string): Status | undefined;
  unreserve(state: CycleState, pod: Pod, nodeName: string): void;
}

/**
 * Approves, denies or delays the binding: Wait with a time-out in ms (at most 15 minutes) holds the pod until the
 * plugin (or another, through the handle's waiting pods) allows or rejects it; the time-out rejects it.
 */
export interface PermitPlugin extends Plugin {
  permit(state: CycleState, pod: Pod, nodeName: string): { status?: Status; timeoutMs?: number };
}

/** Runs before binding (volume binding). */
export interface PreBindPlugin extends Plugin {
  preBind(state: CycleState, pod: Pod, nodeName: string): Promise<Status | undefined>;
}

/** Binds; answers Skip to let the next bind plugin do it. */
export interface BindPlugin extends Plugin {
  bind(state: CycleState, pod: Pod, nodeName: string): Promise<Status | undefined>;
}

/** Informational, after a successful binding. */
export interface PostBindPlugin extends Plugin {
  postBind(state: CycleState, pod: Pod, nodeName: string): void;
}

/** The cluster events that can make a rejected pod schedulable (for moving pods out of the unschedulable pool). */
export type ClusterEvent =
  | 'NodeAdd'
  | 'NodeUpdate'
  | 'NodeDelete'
  | 'AssignedPodAdd'
  | 'AssignedPodUpdate'
  | 'AssignedPodDelete'
  | 'PvcAdd'
  | 'PvcUpdate'
  | 'PvAdd'
  | 'PvUpdate'
  | 'ServiceChange'
  | 'StorageClassAdd'
  | 'UnschedulableTimeout';

/** A plugin may name the events that can make the pods it rejected schedulable. */
export interface EnqueueExtensions extends Plugin {
  eventsToRegister(): ClusterEvent[];
}

/** Makes a plugin from its args (already defaulted) and the handle. */
export type PluginFactory = (args: unknown, handle: FrameworkHandle) => Plugin;

export type { Node, Pod };
export type { WaitingPod };
