export {
  daemonSetController,
  DaemonSetControllerOptions,
  type DaemonSetControllerConfig,
  nodeShouldRunDaemonPod,
  targetNodeName,
  DAEMONSET_HASH_LABEL,
} from './daemonset-controller';
