import { type Attributes } from '../../auth/authorizer';
import { RbacAuthorizer } from '../../auth/authorization/rbac/authorizer';
import { RbacIndex } from '../../auth/authorization/rbac/index';
import {
  clusterRoleBindings,
  clusterRoles,
  CONTROLLER_MANAGER_USER,
  namespaceRoleBindings,
  namespaceRoles,
  SCHEDULER_USER,
} from './rbac-policy';

/** The real RBAC authorizer over the bootstrap policy alone. */
function authorizer(): RbacAuthorizer {
  const index = new RbacIndex();
  index.clusterRoles.replace(clusterRoles());
  index.clusterRoleBindings.replace(clusterRoleBindings());
  index.roles.replace(namespaceRoles());
  index.roleBindings.replace(namespaceRoleBindings());
  return new RbacAuthorizer(index);
}

function request(
  user: string,
  verb: string,
  apiGroup: string,
  resource: string,
  name: string,
  namespace = 'system',
): Attributes {
  return {
    user: { name: user, uid: '', groups: ['system:authenticated'], extra: {} },
    verb,
    resourceRequest: true,
    namespace,
    apiGroup,
    apiVersion: 'v1',
    resource,
    subresource: '',
    name,
    path: '',
  };
}

describe('the bootstrap policy of the leader election locks', () => {
  const authz = authorizer();
  const allowed = (a: Attributes): boolean => authz.decide(a).decision === 'allow';

  it.each([
    [CONTROLLER_MANAGER_USER, 'controller-manager'],
    [SCHEDULER_USER, 'scheduler'],
  ])('lets %s take its lock %s in system with every lock type', (user, lock) => {
    for (const [group, resource] of [
      ['coordination.platform', 'leases'],
      ['', 'endpoints'],
      ['', 'configmaps'],
    ] as const) {
      // Create carries no name in RBAC; get and update are for the daemon's own lock name only.
      expect(allowed(request(user, 'create', group, resource, ''))).toBe(true);
      expect(allowed(request(user, 'get', group, resource, lock))).toBe(true);
      expect(allowed(request(user, 'update', group, resource, lock))).toBe(true);
      expect(allowed(request(user, 'update', group, resource, 'someone-else'))).toBe(false);
    }
    // The ConfigMap lock is granted in the system namespace only (as 1.21's leader-locking Roles).
    expect(allowed(request(user, 'update', '', 'configmaps', lock, 'default'))).toBe(false);
    expect(allowed(request(user, 'create', '', 'configmaps', '', 'default'))).toBe(false);
  });
});
