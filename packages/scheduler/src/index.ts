/** @platform/scheduler — the scheduler: queue, cache, framework with extension points, plugins. */
export { main } from './cmd/main';
