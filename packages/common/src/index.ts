/**
 * The @platform/common package: the component base shared by every daemon — option families and the flag
 * machinery, feature gates, logging, TLS, the secure server with health checks, metrics and profiling, and the
 * version.
 */
export * from './options/duration';
export * from './options/parsers';
export * from './options/flags';
export * from './options/command';
export * from './options/logging-options';
export * from './options/metrics-options';
export * from './options/feature-gate-options';
export * from './options/secure-serving-options';
export * from './options/profiling-options';
export * from './options/version-options';
export * from './options/leader-election-options';
export * from './options/delegated-auth-options';
export * from './features/known-features';
export * from './features/feature-gate';
export * from './logging/config';
export * from './logging/format';
export * from './logging/logger';
export * from './logging/create-logging';
export * from './logging/testing/capture';
export * from './logging/file-sink';
export * from './tls/cert-key';
export * from './tls/csr';
export * from './tls/cipher-suites';
export * from './tls/sni';
export * from './metrics/registry';
export * from './server/health';
export * from './server/profiling';
export * from './server/secure-server';
export * from './version/version';
export * from './docs/reference';
