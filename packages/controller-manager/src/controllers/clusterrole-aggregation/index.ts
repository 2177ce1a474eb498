/** The `clusterrole-aggregation` controller: fills the rules of aggregated ClusterRoles. */
export * from './cluster-role-aggregation';
