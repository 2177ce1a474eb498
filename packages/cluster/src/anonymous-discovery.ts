/**
 * What `platform up` lets anonymous requests do: health checks and the version (Kubernetes' default,
 * `system:public-info-viewer`) and discovery (`/api`, `/apis` and below, `/openapi`), which Kubernetes 1.21 gives
 * only to authenticated users. A local cluster's clients (a `kubectl version` without credentials, a browser) may
 * discover what it serves; nothing else is open to them.
 */
import { requestJson } from './http';

/** The binding of `system:discovery` to `system:unauthenticated`. */
export const ANONYMOUS_DISCOVERY_BINDING = 'platform:anonymous-discovery';

/**
 * Creates the binding unless it exists (one a user deleted comes back at the next start; a changed one stays), on
 * the API server at `server` as the admin (`token`, trusting `ca`).
 */
export async function ensureAnonymousDiscovery(server: string, token: string, ca: string): Promise<void> {
  const answer = await requestJson(`${server}/apis/rbac.authorization.platform/v1/clusterrolebindings`, {
    method: 'POST',
    token,
    ca,
    body: {
      apiVersion: 'rbac.authorization.platform/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: ANONYMOUS_DISCOVERY_BINDING },
      roleRef: { apiGroup: 'rbac.authorization.platform', kind: 'ClusterRole', name: 'system:discovery' },
      subjects: [{ apiGroup: 'rbac.authorization.platform', kind: 'Group', name: 'system:unauthenticated' }],
    },
  });
  // 409: it exists already.
  if (answer.status !== 201 && answer.status !== 200 && answer.status !== 409) {
    const message = (answer.body as { message?: string } | undefined)?.message;
    throw new Error(
      `creating ${ANONYMOUS_DISCOVERY_BINDING} answered ${answer.status}${message ? `: ${message}` : ''}`,
    );
  }
}
