/**
 * Authentication (model: apiserver `pkg/authentication`): an authenticator looks at a request's credentials and says
 * who sent it. The chain tries each method in order and the first success wins; credentials that a method
 * recognises but rejects fail the request (401) even when anonymous requests are allowed, so a bad token never
 * quietly becomes `system:anonymous`.
 */
import { type IncomingMessage } from 'node:http';

import { type UserInfo } from '../registry/rest/rest';

export type { UserInfo } from '../registry/rest/rest';

export const ANONYMOUS_USER = 'system:anonymous';
export const UNAUTHENTICATED_GROUP = 'system:unauthenticated';
export const AUTHENTICATED_GROUP = 'system:authenticated';
export const MASTERS_GROUP = 'system:masters';

/** What an authenticator found: the user, and which audiences the credential was meant for (token methods). */
export interface AuthenticationResult {
  user: UserInfo;
  audiences?: string[];
}

/**
 * One authentication method. Resolves `undefined` when the request carries no credential this method reads (the
 * next method is tried); throws {@link AuthenticationError} when it carries one and it is not valid.
 */
export interface Authenticator {
  authenticate(req: IncomingMessage): Promise<AuthenticationResult | undefined>;
}

/** A credential was presented and rejected. The message is logged, never sent to the client. */
export class AuthenticationError extends Error {
  override readonly name = 'AuthenticationError';
}

export function isAuthenticationError(err: unknown): err is AuthenticationError {
  return err instanceof AuthenticationError;
}

/**
 * The methods in order; the first that recognises a credential decides. When some method rejected a credential
 * and none accepted one, the request fails with the rejections joined.
 */
export function unionAuthenticator(methods: Authenticator[]): Authenticator {
  return {
    async authenticate(req) {
      const errors: string[] = [];
      for (const m of methods) {
        try {
          const r = await m.authenticate(req);
          if (r) return r;
        } catch (err) {
          if (!isAuthenticationError(err)) throw err;
          errors.push(err.message);
        }
      }
      if (errors.length > 0) throw new AuthenticationError(errors.join('; '));
      return undefined;
    },
  };
}

/** Adds `system:authenticated` to every authenticated user that lacks it. */
export function withAuthenticatedGroup(inner: Authenticator): Authenticator {
  return {
    async authenticate(req) {
      const r = await inner.authenticate(req);
      if (!r || r.user.groups.includes(AUTHENTICATED_GROUP)) return r;
      return { ...r, user: { ...r.user, groups: [...r.user.groups, AUTHENTICATED_GROUP] } };
    },
  };
}

/** The anonymous user, given to requests without credentials when `--anonymous-auth` is on. */
export const ANONYMOUS: UserInfo = { name: ANONYMOUS_USER, groups: [UNAUTHENTICATED_GROUP] };

/**
 * The authenticator of a server: the configured methods (with `system:authenticated` added), then the anonymous user
 * for requests without any credential when `anonymous` is true. Undefined result = 401.
 */
export function requestAuthenticator(methods: Authenticator[], anonymous: boolean): Authenticator {
  const chain = withAuthenticatedGroup(unionAuthenticator(methods));
  return {
    async authenticate(req) {
      const r = await chain.authenticate(req);
      if (r) return r;
      return anonymous ? { user: ANONYMOUS } : undefined;
    },
  };
}
