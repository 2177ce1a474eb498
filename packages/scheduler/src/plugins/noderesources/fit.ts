/**
 * NodeResourcesFit (1.21 `noderesources/fit.go`): the pod's requests (containers summed, raised to any init
 * container's, plus the overhead) must fit the node's allocatable minus what its pods request: pods, CPU,
 * memory, ephemeral storage and every scalar resource (extended resources, hugepages). Each shortage is a reason
 * (`Insufficient cpu`, `Too many pods`).
 */
import { type Pod } from '@platform/api';

import { type NodeInfo } from '../../framework/node-info';
import { isExtendedResourceName, podRequests, type Resource } from '../../framework/resource';
import {
  type ClusterEvent,
  type CycleState,
  type EnqueueExtensions,
  type FilterPlugin,
  type PluginFactory,
  type PreFilterPlugin,
  type Status,
  unschedulable,
} from '../../framework/types';

export const NAME = 'NodeResourcesFit';
const KEY = `PreFilter${NAME}`;

/** NodeResourcesFitArgs. */
export interface FitArgs {
  ignoredResources?: string[];
  ignoredResourceGroups?: string[];
}

/** One shortage. */
export interface InsufficientResource {
  resourceName: string;
  reason: string;
  requested: number;
  used: number;
  capacity: number;
}

/** The shortages of `req` on a node (`fitsRequest`). */
export function fitsRequest(
  req: Resource,
  node: NodeInfo,
  ignored: ReadonlySet<string> = new Set(),
  ignoredGroups: ReadonlySet<string> = new Set(),
): InsufficientResource[] {
  const out: InsufficientResource[] = [];
  const allowed = node.allocatable.allowedPodNumber;
  if (node.pods.length + 1 > allowed)
    out.push({
      resourceName: 'pods',
      reason: 'Too many pods',
      requested: 1,
      used: node.pods.length,
      capacity: allowed,
    });
  if (req.isZero()) return out;
  const a = node.allocatable;
  const r = node.requested;
  if (req.milliCPU > 0 && a.milliCPU < req.milliCPU + r.milliCPU)
    out.push({
      resourceName: 'cpu',
      reason: 'Insufficient cpu',
      requested: req.milliCPU,
      used: r.milliCPU,
      capacity: a.milliCPU,
    });
  if (req.memory > 0 && a.memory < req.memory + r.memory)
    out.push({
      resourceName: 'memory',
      reason: 'Insufficient memory',
      requested: req.memory,
      used: r.memory,
      capacity: a.memory,
    });
  if (req.ephemeralStorage > 0 && a.ephemeralStorage < req.ephemeralStorage + r.ephemeralStorage)
    out.push({
      resourceName: 'ephemeral-storage',
      reason: 'Insufficient ephemeral-storage',
      requested: req.ephemeralStorage,
      used: r.ephemeralStorage,
      capacity: a.ephemeralStorage,
    });
  for (const [name, v] of req.scalar ?? []) {
    if (v === 0) continue;
    if (isExtendedResourceName(name)) {
      if (ignored.has(name)) continue;
      const group = name.slice(0, name.indexOf('/'));
      if (ignoredGroups.has(group)) continue;
    }
    const cap = a.scalar?.get(name) ?? 0;
    const used = r.scalar?.get(name) ?? 0;
    if (cap < v + used)
      out.push({ resourceName: name, reason: `Insufficient ${name}`, requested: v, used, capacity: cap });
  }
  return out;
}

export class Fit implements PreFilterPlugin, FilterPlugin, EnqueueExtensions {
  readonly name = NAME;
  private readonly ignored: Set<string>;
  private readonly ignoredGroups: Set<string>;
  constructor(args: FitArgs = {}) {
    this.ignored = new Set(args.ignoredResources ?? []);
    this.ignoredGroups = new Set(args.ignoredResourceGroups ?? []);
  }
  eventsToRegister(): ClusterEvent[] {
    return ['AssignedPodDelete', 'NodeAdd', 'NodeUpdate'];
  }
  preFilter(state: CycleState, pod: Pod): Status | undefined {
    state.write(KEY, podRequests(pod).request);
    return undefined;
  }
  filter(state: CycleState, pod: Pod, node: NodeInfo): Status | undefined {
    const req = state.read<Resource>(KEY) ?? podRequests(pod).request;
    const insufficient = fitsRequest(req, node, this.ignored, this.ignoredGroups);
    return insufficient.length ? unschedulable(...insufficient.map((i) => i.reason)) : undefined;
  }
}

export const factory: PluginFactory = (args) => new Fit((args ?? {}) as FitArgs);
