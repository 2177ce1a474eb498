/** @platform/cluster — the `platform` launcher behind `npm start`. */
export { main } from './cmd/main';
export { clusterFiles, ensureCredentials, writeKubeconfig, type ClusterFiles } from './pki';
export { up, type UpOptions } from './up';
