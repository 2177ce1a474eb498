/**
 * The default plugins of a profile (model: Kubernetes 1.21 `apis/config/v1beta1/default_plugins.go`) and how a
 * profile's `plugins` section is merged with them: the defaults of an extension point stay, minus those named in
 * `disabled` (`*` disables them all), followed by `enabled` (an enabled default keeps its place and takes the new
 * weight).
 */
import { EXTENSION_POINTS, type ExtensionPoint, type PluginRef, type ProfilePlugins } from '../framework/framework';

/** The defaults of 1.21 (the cloud-specific volume limits folded into NodeVolumeLimits). */
export function defaultPlugins(): ProfilePlugins {
  return {
    queueSort: [{ name: 'PrioritySort' }],
    preFilter: [
      { name: 'NodeResourcesFit' },
      { name: 'NodePorts' },
      { name: 'PodTopologySpread' },
      { name: 'InterPodAffinity' },
      { name: 'VolumeBinding' },
    ],
    filter: [
      { name: 'NodeUnschedulable' },
      { name: 'NodeResourcesFit' },
      { name: 'NodeName' },
      { name: 'NodePorts' },
      { name: 'NodeAffinity' },
      { name: 'VolumeRestrictions' },
      { name: 'TaintToleration' },
      { name: 'NodeVolumeLimits' },
      { name: 'VolumeBinding' },
      { name: 'VolumeZone' },
      { name: 'PodTopologySpread' },
      { name: 'InterPodAffinity' },
    ],
    postFilter: [{ name: 'DefaultPreemption' }],
    preScore: [{ name: 'InterPodAffinity' }, { name: 'PodTopologySpread' }, { name: 'TaintToleration' }],
    score: [
      { name: 'NodeResourcesBalancedAllocation', weight: 1 },
      { name: 'ImageLocality', weight: 1 },
      { name: 'InterPodAffinity', weight: 1 },
      { name: 'NodeResourcesLeastAllocated', weight: 1 },
      { name: 'NodeAffinity', weight: 1 },
      { name: 'NodePreferAvoidPods', weight: 10000 },
      { name: 'PodTopologySpread', weight: 2 },
      { name: 'TaintToleration', weight: 1 },
    ],
    reserve: [{ name: 'VolumeBinding' }],
    permit: [],
    preBind: [{ name: 'VolumeBinding' }],
    bind: [{ name: 'DefaultBinder' }],
    postBind: [],
  };
}

/** The `ClusterAutoscalerProvider` defaults: MostAllocated instead of LeastAllocated. */
export function clusterAutoscalerPlugins(): ProfilePlugins {
  const p = defaultPlugins();
  p.score = p.score.map((r) =>
    r.name === 'NodeResourcesLeastAllocated' ? { ...r, name: 'NodeResourcesMostAllocated' } : r,
  );
  return p;
}

/** A `plugins` section of a profile: per extension point, enabled and disabled plugins. */
export type PluginsSection = Partial<Record<ExtensionPoint, { enabled?: PluginRef[]; disabled?: { name: string }[] }>>;

/** Merges a profile's `plugins` with the defaults. */
export function mergePlugins(defaults: ProfilePlugins, custom: PluginsSection | undefined): ProfilePlugins {
  const out = {} as ProfilePlugins;
  for (const point of EXTENSION_POINTS) {
    const c = custom?.[point];
    const disabled = new Set((c?.disabled ?? []).map((d) => d.name));
    const enabled = c?.enabled ?? [];
    const result: PluginRef[] = [];
    const enabledByName = new Map(enabled.map((e) => [e.name, e]));
    const used = new Set<string>();
    if (!disabled.has('*'))
      for (const d of defaults[point]) {
        if (disabled.has(d.name)) continue;
        const override = enabledByName.get(d.name);
        result.push(override ? { name: d.name, weight: override.weight ?? d.weight } : { ...d });
        if (override) used.add(d.name);
      }
    for (const e of enabled) if (!used.has(e.name)) result.push({ ...e });
    out[point] = result;
  }
  return out;
}
