/** @platform/controller-manager — the controller manager: one folder per controller under controllers/, each on shared informers and a rate-limited work queue. */
export { main } from './cmd/main';
