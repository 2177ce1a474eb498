/** @platform/node-agent — the node agent: pod sources, runtimes (cri, builtin, simulated), pod workers, probes, status, node registration, eviction, server. */
export { main } from './cmd/main';
export * from './runtime/runtime';
