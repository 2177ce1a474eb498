/**
 * Authentication and authorization for integration tests that need users: a bearer token names the user and its
 * groups (`Authorization: Bearer <user>[|<group>,<group>...]`), the health endpoints are open to everyone (the test
 * server polls `/readyz` anonymously), and the rest goes to the chain `--authorization-mode` builds.
 */
import { type Authenticator, requestAuthenticator } from '../auth/authenticator';
import { type Authorizer, unionAuthorizer } from '../auth/authorizer';
import { type AuthorizationSettings, buildAuthorizer } from '../cmd/authorization-options';
import { type ApiServerConfig } from '../server/api-server';

/** `Bearer <user>|<group>,...`: the user and groups of a request (tests only; never in a real server). */
export const bearerTestUsers: Authenticator = {
  async authenticate(req) {
    const h = req.headers.authorization;
    if (!h?.startsWith('Bearer ')) return undefined;
    const [name = '', groups = ''] = h.slice('Bearer '.length).split('|');
    return { user: { name, groups: groups ? groups.split(',') : [] } };
  },
};

/** Allows the health endpoints to everyone and has no opinion on the rest. */
export const healthForEveryone: Authorizer = {
  authorize: async (a) =>
    !a.resourceRequest && ['/readyz', '/livez', '/healthz'].includes(a.path)
      ? { decision: 'allow', reason: '' }
      : { decision: 'noOpinion', reason: '' },
};

/** The security of a test server: bearer test users, authorized by the given modes (`RBAC` by default). */
export function testSecurity(settings: Partial<AuthorizationSettings> = {}): NonNullable<ApiServerConfig['security']> {
  return {
    authenticator: requestAuthenticator([bearerTestUsers], true),
    authorizer: unionAuthorizer([
      healthForEveryone,
      buildAuthorizer({
        modes: ['RBAC'],
        policyFile: '',
        webhookConfigFile: '',
        webhookVersion: 'v1beta1',
        webhookCacheAuthorizedTtlMs: 300_000,
        webhookCacheUnauthorizedTtlMs: 30_000,
        ...settings,
      }),
    ]),
  };
}
