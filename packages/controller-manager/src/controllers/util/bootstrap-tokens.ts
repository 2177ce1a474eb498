/**
 * Bootstrap token Secrets as the API server's bootstrap token authenticator reads them (Kubernetes 1.21
 * `k8s.io/cluster-bootstrap/token/api`, renamed): type `bootstrap.platform/token`, named `bootstrap-token-<id>`, in
 * namespace `system`, with `token-id`, `token-secret`, `expiration` (RFC 3339) and `usage-bootstrap-*` data keys.
 */
import { type Secret } from '@platform/api';

export const BOOTSTRAP_TOKEN_SECRET_TYPE = 'bootstrap.platform/token';
/** Where bootstrap token Secrets live (Kubernetes' kube-system). */
export const BOOTSTRAP_TOKEN_NAMESPACE = 'system';
export const BOOTSTRAP_TOKEN_SECRET_PREFIX = 'bootstrap-token-';

/** A data value of a Secret, decoded (`data` is base64); undefined when absent. */
export function secretData(secret: Secret, key: string): string | undefined {
  const v = secret.data?.[key];
  return typeof v === 'string' ? Buffer.from(v, 'base64').toString('utf8') : undefined;
}

/** Whether `secret` is a bootstrap token Secret of the token namespace. */
export function isBootstrapTokenSecret(secret: Secret): boolean {
  return secret.metadata?.namespace === BOOTSTRAP_TOKEN_NAMESPACE && secret.type === BOOTSTRAP_TOKEN_SECRET_TYPE;
}

/**
 * When the token expires (epoch ms): undefined without `expiration`; an unparseable one counts as already expired,
 * as 1.21's `HasExpired` treats it.
 */
export function tokenExpiry(secret: Secret): number | undefined {
  const text = secretData(secret, 'expiration');
  if (text === undefined) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? -Infinity : at;
}
