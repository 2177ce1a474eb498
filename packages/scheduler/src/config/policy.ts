/**
 * The legacy scheduler Policy (`--policy-config-file`, `--policy-configmap`; model: 1.21
 * `framework/plugins/legacy_registry.go`): predicates and priorities by their 1.x names, turned into the plugins
 * that implement them. Unknown names fail.
 */
import { type PluginRef, type ProfilePlugins } from '../framework/framework';
import { ConfigError } from './config';

/** The Policy object (`kind: Policy`). */
export interface Policy {
  kind?: string;
  apiVersion?: string;
  predicates?: { name: string }[];
  priorities?: { name: string; weight?: number }[];
  hardPodAffinitySymmetricWeight?: number;
  alwaysCheckAllPredicates?: boolean;
}

type Points = Partial<Record<keyof ProfilePlugins, string[]>>;

const PREDICATES: Record<string, Points> = {
  PodFitsResources: { preFilter: ['NodeResourcesFit'], filter: ['NodeResourcesFit'] },
  PodFitsHostPorts: { preFilter: ['NodePorts'], filter: ['NodePorts'] },
  HostName: { filter: ['NodeName'] },
  MatchNodeSelector: { filter: ['NodeAffinity'] },
  PodToleratesNodeTaints: { filter: ['TaintToleration'] },
  CheckNodeUnschedulable: { filter: ['NodeUnschedulable'] },
  MatchInterPodAffinity: { preFilter: ['InterPodAffinity'], filter: ['InterPodAffinity'] },
  EvenPodsSpread: { preFilter: ['PodTopologySpread'], filter: ['PodTopologySpread'] },
  NoDiskConflict: { filter: ['VolumeRestrictions'] },
  NoVolumeZoneConflict: { filter: ['VolumeZone'] },
  MaxCSIVolumeCountPred: { filter: ['NodeVolumeLimits'] },
  CheckVolumeBinding: {
    preFilter: ['VolumeBinding'],
    filter: ['VolumeBinding'],
    reserve: ['VolumeBinding'],
    preBind: ['VolumeBinding'],
  },
  GeneralPredicates: {
    preFilter: ['NodeResourcesFit', 'NodePorts'],
    filter: ['NodeResourcesFit', 'NodeName', 'NodePorts', 'NodeAffinity'],
  },
};

const PRIORITIES: Record<string, { score: string; preScore?: string }> = {
  LeastRequestedPriority: { score: 'NodeResourcesLeastAllocated' },
  MostRequestedPriority: { score: 'NodeResourcesMostAllocated' },
  BalancedResourceAllocation: { score: 'NodeResourcesBalancedAllocation' },
  ImageLocalityPriority: { score: 'ImageLocality' },
  InterPodAffinityPriority: { score: 'InterPodAffinity', preScore: 'InterPodAffinity' },
  NodeAffinityPriority: { score: 'NodeAffinity' },
  TaintTolerationPriority: { score: 'TaintToleration', preScore: 'TaintToleration' },
  NodePreferAvoidPodsPriority: { score: 'NodePreferAvoidPods' },
  EvenPodsSpreadPriority: { score: 'PodTopologySpread', preScore: 'PodTopologySpread' },
  RequestedToCapacityRatioPriority: { score: 'RequestedToCapacityRatio' },
};

/** Parses a policy text (JSON or YAML already loaded) and checks its names. */
export function parsePolicy(raw: unknown, where: string): Policy {
  if (typeof raw !== 'object' || raw === null) throw new ConfigError(where, ['the policy must be an object']);
  const p = raw as Policy;
  const errs: string[] = [];
  (p.predicates ?? []).forEach((x, i) => {
    if (!PREDICATES[x?.name]) errs.push(`predicates[${i}].name: Unsupported value: ${JSON.stringify(x?.name)}`);
  });
  (p.priorities ?? []).forEach((x, i) => {
    if (!PRIORITIES[x?.name]) errs.push(`priorities[${i}].name: Unsupported value: ${JSON.stringify(x?.name)}`);
    if (x?.weight !== undefined && (x.weight <= 0 || x.weight >= 2 ** 31))
      errs.push(`priorities[${i}].weight: Invalid value: ${x.weight}: must be greater than 0`);
  });
  const w = p.hardPodAffinitySymmetricWeight;
  if (w !== undefined && (w < 0 || w > 100))
    errs.push(`hardPodAffinitySymmetricWeight: Invalid value: ${w}: not in valid range [0-100]`);
  if (errs.length) throw new ConfigError(where, errs);
  return p;
}

/** The plugins of a policy: the predicates' and priorities' plugins plus the ones every profile needs. */
export function policyToPlugins(p: Policy): ProfilePlugins {
  const out: ProfilePlugins = {
    queueSort: [{ name: 'PrioritySort' }],
    preFilter: [],
    filter: [],
    postFilter: [{ name: 'DefaultPreemption' }],
    preScore: [],
    score: [],
    reserve: [],
    permit: [],
    preBind: [],
    bind: [{ name: 'DefaultBinder' }],
    postBind: [],
  };
  const add = (point: keyof ProfilePlugins, ref: PluginRef): void => {
    if (!out[point].some((r) => r.name === ref.name)) out[point].push(ref);
  };
  for (const pr of p.predicates ?? [])
    for (const [pt, names] of Object.entries(PREDICATES[pr.name] ?? {}))
      for (const n of names) add(pt as keyof ProfilePlugins, { name: n });
  for (const pr of p.priorities ?? []) {
    const m = PRIORITIES[pr.name];
    if (!m) continue;
    if (m.preScore) add('preScore', { name: m.preScore });
    add('score', { name: m.score, weight: pr.weight ?? 1 });
  }
  return out;
}
