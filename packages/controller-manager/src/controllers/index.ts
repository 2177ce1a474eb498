/**
 * Every controller of the controller manager, in the order they start (Kubernetes starts them in its own order;
 * informers they share start once all are started). Each entry is the definition exported by its folder.
 */
import { type ControllerDefinition } from '../controller';
import { bootstrapSignerController } from './bootstrapsigner';
import { clusterRoleAggregationController } from './clusterrole-aggregation';
import { cronJobController } from './cronjob';
import { csrApprovingController } from './csrapproving';
import { csrCleanerController } from './csrcleaner';
import { csrSigningController } from './csrsigning';
import { daemonSetController } from './daemonset';
import { deploymentController } from './deployment';
import { disruptionController } from './disruption';
import { endpointController } from './endpoint';
import { endpointSliceController } from './endpointslice';
import { endpointSliceMirroringController } from './endpointslicemirroring';
import { garbageCollectorController } from './garbagecollector';
import { jobController } from './job';
import { namespaceController } from './namespace';
import { nodeIPAMController } from './nodeipam';
import { nodeLifecycleController } from './nodelifecycle';
import { podGCController } from './podgc';
import { pvProtectionController } from './pv-protection';
import { pvcProtectionController } from './pvc-protection';
import { persistentVolumeBinderController } from './persistentvolume-binder';
import { horizontalPodAutoscalingController } from './horizontalpodautoscaling';
import { ephemeralVolumeController } from './ephemeral-volume';
import { persistentVolumeExpanderController } from './persistentvolume-expander';
import { attachDetachController } from './attachdetach';
import { resourceQuotaController } from './resourcequota';
import { rootCACertPublisherController } from './root-ca-cert-publisher';
import { replicaSetController } from './replicaset';
import { replicationControllerController } from './replicationcontroller';
import { serviceController } from './service';
import { serviceAccountController } from './serviceaccount';
import { serviceAccountTokenController } from './serviceaccount-token';
import { statefulSetController } from './statefulset';
import { tokenCleanerController } from './tokencleaner';
import { ttlController } from './ttl';
import { ttlAfterFinishedController } from './ttl-after-finished';

export const CONTROLLERS: readonly ControllerDefinition[] = [
  // one line per controller: `deploymentController,` (import it above)
  replicaSetController,
  replicationControllerController,
  deploymentController,
  serviceAccountController,
  serviceAccountTokenController,
  clusterRoleAggregationController,
  namespaceController,
  garbageCollectorController,
  jobController,
  cronJobController,
  statefulSetController,
  daemonSetController,
  resourceQuotaController,
  podGCController,
  ttlAfterFinishedController,
  disruptionController,
  nodeLifecycleController,
  nodeIPAMController,
  rootCACertPublisherController,
  endpointController,
  endpointSliceController,
  serviceController,
  ttlController,
  endpointSliceMirroringController,
  bootstrapSignerController,
  tokenCleanerController,
  pvcProtectionController,
  pvProtectionController,
  persistentVolumeBinderController,
  horizontalPodAutoscalingController,
  ephemeralVolumeController,
  persistentVolumeExpanderController,
  attachDetachController,
  csrSigningController,
  csrApprovingController,
  csrCleanerController,
];
