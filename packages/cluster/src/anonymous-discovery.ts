/**
 * What `platform up` lets anonymous requests do: health checks and the version (Kubernetes' default,
 * `system:public-info-viewer`) and discovery (`/api`, `/apis` and below, `/openapi`), which Kubernetes 1.21 gives
 * only to authenticated users. A local cluster's clients (a `kubectl version` without credentials, a browser) may
 * discover what it serves; nothing else is open to them.
 */
import { ClusterRoleBindingKind, isAlreadyExists } from '@platform/api';
import { type Clientset } from '@platform/client';

/** The binding of `system:discovery` to `system:unauthenticated`. */
export const ANONYMOUS_DISCOVERY_BINDING = 'platform:anonymous-discovery';

/** Creates the binding unless it exists (one a user deleted comes back at the next start; a changed one stays). */
export async function ensureAnonymousDiscovery(clientset: Clientset): Promise<void> {
  try {
    await clientset.resource(ClusterRoleBindingKind).create({
      apiVersion: 'rbac.authorization.platform/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: ANONYMOUS_DISCOVERY_BINDING },
      roleRef: { apiGroup: 'rbac.authorization.platform', kind: 'ClusterRole', name: 'system:discovery' },
      subjects: [{ apiGroup: 'rbac.authorization.platform', kind: 'Group', name: 'system:unauthenticated' }],
    });
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
}
