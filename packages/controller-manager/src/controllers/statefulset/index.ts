export {
  statefulSetController,
  StatefulSetControllerOptions,
  type StatefulSetControllerConfig,
  claimName,
  ordinalOf,
  STATEFULSET_POD_NAME_LABEL,
  POD_REVISION_LABEL,
} from './statefulset-controller';
