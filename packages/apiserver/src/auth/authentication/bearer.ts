/**
 * Bearer tokens (model: apiserver `pkg/authentication/request/bearertoken`): the token of `Authorization: Bearer
 * <token>` goes to the token authenticators in order (token file, service accounts, bootstrap tokens, OIDC,
 * webhook); the first that accepts it decides. A bearer token that none accepts fails the request (401), so a bad
 * token never quietly becomes the anonymous user. Requests without a bearer token are left to the other methods.
 */
import { type IncomingMessage } from 'node:http';

import { type AuthenticationResult, type Authenticator, AuthenticationError } from '../authenticator';

/**
 * One token method. Resolves `undefined` when the token is not one it handles (wrong shape, another issuer) and
 * throws {@link AuthenticationError} when it is one of its own and invalid. `audiences` are those the token must be
 * valid for (the API's own audiences for requests; a TokenReview's for reviews).
 */
export interface TokenAuthenticator {
  authenticateToken(token: string, audiences: readonly string[]): Promise<AuthenticationResult | undefined>;
}

/** The token of an `Authorization: Bearer <token>` header; undefined when there is none (or it is empty). */
export function bearerToken(req: IncomingMessage): string | undefined {
  const auth = req.headers.authorization;
  if (typeof auth !== 'string') return undefined;
  const parts = auth.split(' ');
  if (parts.length < 2 || parts[0]!.toLowerCase() !== 'bearer') return undefined;
  const token = parts[1]!;
  return token === '' ? undefined : token;
}

/** The token methods in order; the first to accept decides, a token nobody accepts is an error. */
export function unionTokenAuthenticator(methods: TokenAuthenticator[]): TokenAuthenticator {
  return {
    async authenticateToken(token, audiences) {
      const errors: string[] = [];
      for (const m of methods) {
        try {
          const r = await m.authenticateToken(token, audiences);
          if (r) return r;
        } catch (err) {
          if (!(err instanceof AuthenticationError)) throw err;
          errors.push(err.message);
        }
      }
      if (errors.length) throw new AuthenticationError(errors.join('; '));
      return undefined;
    },
  };
}

/** The request authenticator of bearer tokens: no bearer token → no opinion; a token no method accepts → 401. */
export function bearerTokenAuthenticator(tokens: TokenAuthenticator, apiAudiences: readonly string[]): Authenticator {
  return {
    async authenticate(req) {
      const token = bearerToken(req);
      if (token === undefined) return undefined;
      const r = await tokens.authenticateToken(token, apiAudiences);
      if (!r) throw new AuthenticationError('invalid bearer token');
      return r;
    },
  };
}

/** Whether two audience lists share one; an empty `wanted` list accepts any token. */
export function audiencesIntersect(token: readonly string[], wanted: readonly string[]): string[] {
  if (wanted.length === 0) return [...token];
  return token.filter((a) => wanted.includes(a));
}
