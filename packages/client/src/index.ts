/**
 * @platform/client — how daemons talk to the API server: the REST client (JSON and Protobuf, rate limit, retries),
 * client configuration files, watches, informers (reflector, store and indexers, shared informer factory), the
 * rate-limited work queue, leader election (Lease, Endpoints, ConfigMap and migration locks) and the event recorder.
 */
export * from './util/clock';
export * from './util/token-bucket';
export * from './config/client-config';
export * from './config/yaml';
export * from './rest/rest-client';
export * from './rest/resource-client';
export * from './watch/decoder';
export * from './watch/watch';
export * from './informers/store';
export * from './informers/backoff';
export * from './informers/shared-informer';
export * from './informers/informer-factory';
export * from './workqueue/rate-limiters';
export * from './workqueue/queue';
export * from './leaderelection/leader-elector';
export * from './leaderelection/resource-lock';
export * from './events/event-recorder';
export * from './options/client-connection-options';
export * from './auth/delegated-auth';
