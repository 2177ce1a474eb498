/**
 * A profile's framework (model: Kubernetes 1.21 `framework/runtime/framework.go`): the plugins enabled at each
 * extension point, in order, with their score weights, and the code that runs them. Filters stop at the first
 * plugin that rejects a node; scores are normalized per plugin, weighted and summed.
 */
import { type Pod } from '@platform/api';

import { NodeInfo } from './node-info';
import { type Registry } from './registry';
import {
  type BindPlugin,
  type ClusterEvent,
  CycleState,
  type EnqueueExtensions,
  errorStatus,
  type FilterPlugin,
  type FrameworkHandle,
  type FrameworkRunner,
  isSuccess,
  MAX_NODE_SCORE,
  MIN_NODE_SCORE,
  type NodeScore,
  type NodeToStatus,
  type PermitPlugin,
  type Plugin,
  type PostBindPlugin,
  type PostFilterPlugin,
  type PreBindPlugin,
  type PreFilterPlugin,
  type PreFilterResult,
  type PreScorePlugin,
  type QueuedPodInfo,
  type QueueSortPlugin,
  type ReservePlugin,
  type SchedulerHandle,
  type ScorePlugin,
  Status,
} from './types';
import { MAX_PERMIT_TIMEOUT_MS, WaitingPodsMap } from './waiting-pods';

/** The extension points a profile configures, in the order a pod meets them. */
export const EXTENSION_POINTS = [
  'queueSort',
  'preFilter',
  'filter',
  'postFilter',
  'preScore',
  'score',
  'reserve',
  'permit',
  'preBind',
  'bind',
  'postBind',
] as const;
export type ExtensionPoint = (typeof EXTENSION_POINTS)[number];

/** A plugin enabled at an extension point (weight for score only). */
export interface PluginRef {
  name: string;
  weight?: number;
}

/** The resolved plugins of a profile: what each extension point runs, in order. */
export type ProfilePlugins = Record<ExtensionPoint, PluginRef[]>;

/** Observes the duration of each extension point (scheduler_framework_extension_point_duration_seconds). */
export type ExtensionPointObserver = (point: string, status: string, profile: string, seconds: number) => void;

/** The method each extension point needs of a plugin. */
const METHOD: Record<ExtensionPoint, string> = {
  queueSort: 'less',
  preFilter: 'preFilter',
  filter: 'filter',
  postFilter: 'postFilter',
  preScore: 'preScore',
  score: 'score',
  reserve: 'reserve',
  permit: 'permit',
  preBind: 'preBind',
  bind: 'bind',
  postBind: 'postBind',
};

function priority(pod: Pod): number {
  return pod.spec?.priority ?? 0;
}

function now(): number {
  return performance.now();
}

/** One profile's plugins and the code that runs them. */
export class Framework implements FrameworkRunner {
  readonly queueSort: QueueSortPlugin;
  readonly preFilter: PreFilterPlugin[];
  readonly filter: FilterPlugin[];
  readonly postFilter: PostFilterPlugin[];
  readonly preScore: PreScorePlugin[];
  readonly score: { plugin: ScorePlugin; weight: number }[];
  readonly reserve: ReservePlugin[];
  readonly permit: PermitPlugin[];
  readonly preBind: PreBindPlugin[];
  readonly bind: BindPlugin[];
  readonly postBind: PostBindPlugin[];
  readonly plugins = new Map<string, Plugin>();
  /** Pods held at Permit, by uid. */
  readonly waitingPods = new WaitingPodsMap();
  /** The scheduler's handle with this profile's waiting pods. */
  readonly handle: FrameworkHandle;

  constructor(
    readonly profileName: string,
    plugins: ProfilePlugins,
    pluginArgs: ReadonlyMap<string, unknown>,
    registry: Registry,
    schedulerHandle: SchedulerHandle,
    private readonly observe?: ExtensionPointObserver,
  ) {
    const handle: FrameworkHandle = {
      ...schedulerHandle,
      iterateOverWaitingPods: (cb) => this.waitingPods.iterate(cb),
      getWaitingPod: (uid) => this.waitingPods.get(uid),
      rejectWaitingPod: (uid) => this.waitingPods.reject(uid),
    };
    this.handle = handle;
    const get = (point: ExtensionPoint, ref: PluginRef): Plugin => {
      let p = this.plugins.get(ref.name);
      if (!p) {
        const factory = registry.get(ref.name);
        if (!factory) throw new Error(`profile ${profileName}: ${point}: plugin "${ref.name}" does not exist`);
        p = factory(pluginArgs.get(ref.name), handle);
        this.plugins.set(ref.name, p);
      }
      if (typeof (p as unknown as Record<string, unknown>)[METHOD[point]] !== 'function')
        throw new Error(`profile ${profileName}: plugin "${ref.name}" does not extend ${point}`);
      return p;
    };
    const list = <T>(point: ExtensionPoint): T[] => {
      const seen = new Set<string>();
      return plugins[point].map((r) => {
        if (seen.has(r.name))
          throw new Error(`profile ${profileName}: ${point}: plugin "${r.name}" already registered`);
        seen.add(r.name);
        return get(point, r) as T;
      });
    };
    const qs = list<QueueSortPlugin>('queueSort');
    if (qs.length !== 1)
      throw new Error(`profile ${profileName}: exactly one queueSort plugin must be enabled, found ${qs.length}`);
    this.queueSort = qs[0] as QueueSortPlugin;
    this.preFilter = list('preFilter');
    this.filter = list('filter');
    this.postFilter = list('postFilter');
    this.preScore = list('preScore');
    const scorePlugins = list<ScorePlugin>('score');
    this.score = scorePlugins.map((p, i) => ({ plugin: p, weight: plugins.score[i]?.weight || 1 }));
    this.reserve = list('reserve');
    this.permit = list('permit');
    this.preBind = list('preBind');
    this.bind = list('bind');
    if (this.bind.length === 0) throw new Error(`profile ${profileName}: at least one bind plugin is needed`);
    this.postBind = list('postBind');
  }

  private timed<T>(point: string, f: () => T, statusOf: (t: T) => Status | undefined): T {
    if (!this.observe) return f();
    const t0 = now();
    const r = f();
    this.observe(point, statusOf(r)?.code ?? 'Success', this.profileName, (now() - t0) / 1000);
    return r;
  }

  /** The events each plugin registers (for moving unschedulable pods). */
  pluginEvents(): Map<string, Set<ClusterEvent>> {
    const m = new Map<string, Set<ClusterEvent>>();
    for (const p of this.plugins.values()) {
      const e = (p as Partial<EnqueueExtensions>).eventsToRegister;
      if (typeof e === 'function') m.set(p.name, new Set(e.call(p)));
    }
    return m;
  }

  less = (a: QueuedPodInfo, b: QueuedPodInfo): boolean => this.queueSort.less(a, b);

  /** Runs PreFilter; a rejection is returned with the plugin's name. */
  runPreFilterPlugins(state: CycleState, pod: Pod): { status?: Status; result?: PreFilterResult } {
    return this.timed(
      'PreFilter',
      () => {
        let result: PreFilterResult | undefined;
        for (const p of this.preFilter) {
          let s: Status | undefined;
          try {
            s = p.preFilter(state, pod);
          } catch (err) {
            s = errorStatus(err);
          }
          if (s?.code === 'Skip') {
            state.skipFilter.add(p.name);
            continue;
          }
          if (!isSuccess(s)) {
            (s as Status).plugin = p.name;
            return { status: s };
          }
          const r = state.read<PreFilterResult>(`PreFilterResult/${p.name}`);
          if (r?.nodeNames) {
            if (!result?.nodeNames) result = { nodeNames: new Set(r.nodeNames) };
            else result.nodeNames = new Set([...result.nodeNames].filter((n) => r.nodeNames?.has(n)));
          }
        }
        return { result };
      },
      (r) => r.status,
    );
  }

  runPreFilterExtensionAddPod(state: CycleState, pod: Pod, toAdd: Pod, node: NodeInfo): Status | undefined {
    for (const p of this.preFilter) {
      if (!p.addPod || state.skipFilter.has(p.name)) continue;
      const s = p.addPod(state, pod, toAdd, node);
      if (!isSuccess(s)) return s;
    }
    return undefined;
  }

  runPreFilterExtensionRemovePod(state: CycleState, pod: Pod, toRemove: Pod, node: NodeInfo): Status | undefined {
    for (const p of this.preFilter) {
      if (!p.removePod || state.skipFilter.has(p.name)) continue;
      const s = p.removePod(state, pod, toRemove, node);
      if (!isSuccess(s)) return s;
    }
    return undefined;
  }

  /** Runs the filters on one node; the first rejection, with the plugin's name. */
  runFilterPlugins(state: CycleState, pod: Pod, node: NodeInfo): Status | undefined {
    for (const p of this.filter) {
      if (state.skipFilter.size && state.skipFilter.has(p.name)) continue;
      let s: Status | undefined;
      try {
        s = p.filter(state, pod, node);
      } catch (err) {
        s = errorStatus(err);
      }
      if (s && s.code !== 'Success') {
        s.plugin = p.name;
        return s;
      }
    }
    return undefined;
  }

  /**
   * The filters with the pods nominated to the node (of at least the pod's priority) counted in, then, when
   * they pass and some were added, without them (1.21 `RunFilterPluginsWithNominatedPods`).
   */
  runFilterPluginsWithNominatedPods(state: CycleState, pod: Pod, node: NodeInfo): Status | undefined {
    const nominated = this.handle.nominatedPodsForNode(node.name);
    if (nominated.length === 0) return this.runFilterPlugins(state, pod, node);
    const uid = pod.metadata?.uid;
    const pr = priority(pod);
    const add = nominated.filter((p) => priority(p) >= pr && p.metadata?.uid !== uid);
    if (add.length === 0) return this.runFilterPlugins(state, pod, node);
    const st = state.clone();
    const ni = node.clone();
    for (const p of add) {
      const np = { ...p, spec: { ...p.spec, nodeName: node.name } } as Pod;
      ni.addPod(np);
      const s = this.runPreFilterExtensionAddPod(st, pod, np, ni);
      if (!isSuccess(s)) return s;
    }
    const s = this.runFilterPlugins(st, pod, ni);
    if (!isSuccess(s)) return s;
    return this.runFilterPlugins(state, pod, node);
  }

  async runPostFilterPlugins(
    state: CycleState,
    pod: Pod,
    statuses: NodeToStatus,
  ): Promise<{ nominatedNodeName?: string; status?: Status }> {
    const t0 = now();
    let out: { nominatedNodeName?: string; status?: Status } = { status: new Status('Unschedulable') };
    for (const p of this.postFilter) {
      try {
        const r = await p.postFilter(state, pod, statuses);
        if (isSuccess(r.status)) {
          out = r;
          break;
        }
        out = r;
        if (r.status?.code === 'Error') break;
      } catch (err) {
        out = { status: errorStatus(err) };
        break;
      }
    }
    this.observe?.('PostFilter', out.status?.code ?? 'Success', this.profileName, (now() - t0) / 1000);
    return out;
  }

  runPreScorePlugins(state: CycleState, pod: Pod, nodes: readonly NodeInfo[]): Status | undefined {
    return this.timed(
      'PreScore',
      () => {
        for (const p of this.preScore) {
          const s = p.preScore(state, pod, nodes);
          if (s?.code === 'Skip') {
            state.skipScore.add(p.name);
            continue;
          }
          if (!isSuccess(s)) {
            (s as Status).plugin = p.name;
            return s;
          }
        }
        return undefined;
      },
      (s) => s,
    );
  }

  /** The weighted sum of the normalized scores of every score plugin, per node (aligned with `nodes`). */
  runScorePlugins(state: CycleState, pod: Pod, nodes: readonly NodeInfo[]): { totals: number[]; status?: Status } {
    return this.timed(
      'Score',
      () => {
        const totals = new Array<number>(nodes.length).fill(0);
        for (const { plugin, weight } of this.score) {
          if (state.skipScore.size && state.skipScore.has(plugin.name)) continue;
          const scores: NodeScore[] = new Array(nodes.length);
          for (let i = 0; i < nodes.length; i++) {
            const n = nodes[i] as NodeInfo;
            scores[i] = { name: n.name, score: plugin.score(state, pod, n) };
          }
          if (plugin.normalizeScore) {
            const s = plugin.normalizeScore(state, pod, scores);
            if (!isSuccess(s)) return { totals, status: s };
          }
          for (let i = 0; i < nodes.length; i++) {
            const sc = (scores[i] as NodeScore).score;
            if (sc > MAX_NODE_SCORE || sc < MIN_NODE_SCORE || Number.isNaN(sc))
              return {
                totals,
                status: new Status('Error', [
                  `plugin "${plugin.name}" returns an invalid score ${sc}, it should in the range of [${MIN_NODE_SCORE}, ${MAX_NODE_SCORE}] after normalizing`,
                ]),
              };
            totals[i] = (totals[i] as number) + sc * weight;
          }
        }
        return { totals };
      },
      (r) => r.status,
    );
  }

  runReservePlugins(state: CycleState, pod: Pod, nodeName: string): Status | undefined {
    for (const p of this.reserve) {
      const s = p.reserve(state, pod, nodeName);
      if (!isSuccess(s)) {
        (s as Status).plugin = p.name;
        return s;
      }
    }
    return undefined;
  }

  runUnreservePlugins(state: CycleState, pod: Pod, nodeName: string): void {
    for (let i = this.reserve.length - 1; i >= 0; i--)
      (this.reserve[i] as ReservePlugin).unreserve(state, pod, nodeName);
  }

  /**
   * Permit: a rejection (with the plugin's name), or Wait when some plugin asked to wait (the pod is then in
   * {@link waitingPods} until {@link waitOnPermit} settles), or success.
   */
  runPermitPlugins(state: CycleState, pod: Pod, nodeName: string): { status?: Status } {
    return this.timed(
      'Permit',
      () => {
        const waits = new Map<string, number>();
        for (const p of this.permit) {
          let r: { status?: Status; timeoutMs?: number };
          try {
            r = p.permit(state, pod, nodeName);
          } catch (err) {
            r = { status: errorStatus(err) };
          }
          if (r.status?.code === 'Wait') {
            waits.set(p.name, Math.min(Math.max(r.timeoutMs ?? 0, 0), MAX_PERMIT_TIMEOUT_MS));
          } else if (!isSuccess(r.status)) {
            const s = r.status as Status;
            const name = JSON.stringify(pod.metadata?.name ?? '');
            const out = s.isUnschedulable()
              ? new Status(s.code, [`rejected pod ${name} by permit plugin "${p.name}": ${s.message()}`])
              : new Status('Error', [`error while running "${p.name}" permit plugin for pod ${name}: ${s.message()}`]);
            out.plugin = p.name;
            return { status: out };
          }
        }
        if (waits.size === 0) return {};
        this.waitingPods.add(pod, waits);
        const name = pod.metadata?.name ?? '';
        return {
          status: new Status('Wait', [
            `one or more plugins asked to wait and no plugin rejected pod ${JSON.stringify(name)}`,
          ]),
        };
      },
      (r) => r.status,
    );
  }

  /** Rejects the pod of `uid` waiting at Permit (it was deleted); true when there was one. */
  rejectWaitingPod(uid: string): boolean {
    return this.waitingPods.reject(uid);
  }

  /** Waits for a pod held at Permit: undefined once every waiting plugin allowed it, else the rejection. */
  waitOnPermit(pod: Pod): Promise<Status | undefined> {
    return this.waitingPods.waitOnPermit(pod);
  }

  async runPreBindPlugins(state: CycleState, pod: Pod, nodeName: string): Promise<Status | undefined> {
    for (const p of this.preBind) {
      const s = await p.preBind(state, pod, nodeName);
      if (!isSuccess(s)) {
        (s as Status).plugin = p.name;
        return s;
      }
    }
    return undefined;
  }

  async runBindPlugins(state: CycleState, pod: Pod, nodeName: string): Promise<Status | undefined> {
    const t0 = now();
    let out: Status | undefined = new Status('Skip');
    for (const p of this.bind) {
      try {
        out = await p.bind(state, pod, nodeName);
      } catch (err) {
        out = errorStatus(err);
      }
      if (out?.code === 'Skip') continue;
      if (out) out.plugin = p.name;
      break;
    }
    this.observe?.('Bind', out?.code ?? 'Success', this.profileName, (now() - t0) / 1000);
    return out;
  }

  runPostBindPlugins(state: CycleState, pod: Pod, nodeName: string): void {
    for (const p of this.postBind) p.postBind(state, pod, nodeName);
  }

  /** A fresh cycle state. */
  newCycleState(): CycleState {
    return new CycleState();
  }
}

export { NodeInfo };
