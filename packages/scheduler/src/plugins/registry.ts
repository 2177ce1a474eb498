/** The in-tree plugins by name (model: 1.21 `framework/plugins/registry.go`). */
import { Registry } from '../framework/registry';
import * as defaultBinder from './defaultbinder/default-binder';
import * as defaultPreemption from './defaultpreemption/default-preemption';
import * as imageLocality from './imagelocality/image-locality';
import * as interPodAffinity from './interpodaffinity/inter-pod-affinity';
import * as nodeAffinity from './nodeaffinity/node-affinity';
import * as nodeName from './nodename/node-name';
import * as nodePorts from './nodeports/node-ports';
import * as balanced from './noderesources/balanced-allocation';
import * as fit from './noderesources/fit';
import * as least from './noderesources/least-allocated';
import * as most from './noderesources/most-allocated';
import * as ratio from './noderesources/requested-to-capacity-ratio';
import * as nodePreferAvoidPods from './nodepreferavoidpods/node-prefer-avoid-pods';
import * as nodeUnschedulable from './nodeunschedulable/node-unschedulable';
import * as podTopologySpread from './podtopologyspread/pod-topology-spread';
import * as prioritySort from './prioritysort/priority-sort';
import * as taintToleration from './tainttoleration/taint-toleration';
import * as volume from './volume/volume';

/** A registry of every in-tree plugin. */
export function inTreeRegistry(): Registry {
  const r = new Registry();
  for (const m of [
    prioritySort,
    nodeUnschedulable,
    nodeName,
    taintToleration,
    nodeAffinity,
    nodePorts,
    fit,
    least,
    most,
    balanced,
    ratio,
    defaultBinder,
    imageLocality,
    nodePreferAvoidPods,
    interPodAffinity,
    podTopologySpread,
    defaultPreemption,
  ])
    r.register(m.NAME, m.factory);
  r.register(volume.VOLUME_BINDING, volume.volumeBindingFactory);
  r.register(volume.VOLUME_RESTRICTIONS, volume.volumeRestrictionsFactory);
  r.register(volume.VOLUME_ZONE, volume.volumeZoneFactory);
  r.register(volume.NODE_VOLUME_LIMITS, volume.nodeVolumeLimitsFactory);
  return r;
}
