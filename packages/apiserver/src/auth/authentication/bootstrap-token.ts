/**
 * Bootstrap tokens (model: Kubernetes 1.21 `plugin/pkg/auth/authenticator/token/bootstrap`,
 * `--enable-bootstrap-token-auth`): a token `<id>.<secret>` (6 and 16 characters of `[a-z0-9]`) is valid when the
 * Secret `bootstrap-token-<id>` of type `bootstrap.platform/token` in namespace `system` holds the same id and
 * secret, allows authentication (`usage-bootstrap-authentication: "true"`), is not being deleted and has not
 * expired (`expiration`, RFC 3339). The user is `system:bootstrap:<id>` in `system:bootstrappers` plus the Secret's
 * `auth-extra-groups` (each `system:bootstrappers:...`).
 */
import { timingSafeEqual } from 'node:crypto';

import { type Secret } from '@platform/api';

import { AuthenticationError } from '../authenticator';
import { type TokenAuthenticator } from './bearer';
import { type ObjectReader } from './objects';

export const BOOTSTRAP_TOKEN_SECRET_TYPE = 'bootstrap.platform/token';
export const BOOTSTRAP_TOKEN_NAMESPACE = 'system';
export const BOOTSTRAP_TOKEN_SECRET_PREFIX = 'bootstrap-token-';
export const BOOTSTRAP_USER_PREFIX = 'system:bootstrap:';
export const BOOTSTRAPPERS_GROUP = 'system:bootstrappers';

const TOKEN = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
const EXTRA_GROUP = /^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/;

function data(secret: Secret, key: string): string | undefined {
  const v = secret.data?.[key];
  if (typeof v === 'string') return Buffer.from(v, 'base64').toString('utf8');
  const s = (secret as { stringData?: Record<string, string> }).stringData?.[key];
  return typeof s === 'string' ? s : undefined;
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The bootstrap token authenticator. Tokens of another shape: no opinion. */
export function bootstrapTokenAuthenticator(objects: ObjectReader, now: () => number = Date.now): TokenAuthenticator {
  const reject = (m: string): never => {
    throw new AuthenticationError(`bootstrap token: ${m}`);
  };
  return {
    async authenticateToken(token) {
      const m = TOKEN.exec(token);
      if (!m) return undefined;
      const [, id, secretPart] = m as unknown as [string, string, string];
      const secret = await objects.get<Secret>(
        'secrets',
        BOOTSTRAP_TOKEN_NAMESPACE,
        `${BOOTSTRAP_TOKEN_SECRET_PREFIX}${id}`,
      );
      if (!secret) return reject(`no secret for token id ${id}`);
      if (secret.metadata?.deletionTimestamp) return reject(`the secret of token id ${id} is being deleted`);
      if (secret.type !== BOOTSTRAP_TOKEN_SECRET_TYPE) return reject(`the secret of token id ${id} has the wrong type`);
      if (data(secret, 'token-id') !== id || !same(data(secret, 'token-secret') ?? '', secretPart))
        return reject(`the token does not match the secret of token id ${id}`);
      const expiration = data(secret, 'expiration');
      if (expiration !== undefined) {
        const at = Date.parse(expiration);
        if (Number.isNaN(at) || at < now()) return reject(`token id ${id} has expired`);
      }
      if (data(secret, 'usage-bootstrap-authentication') !== 'true')
        return reject(`token id ${id} is not allowed for authentication`);
      const groups = [BOOTSTRAPPERS_GROUP];
      const extra = data(secret, 'auth-extra-groups');
      if (extra) {
        for (const g of extra.split(',').map((s) => s.trim())) {
          if (!EXTRA_GROUP.test(g)) return reject(`token id ${id} has an invalid extra group ${JSON.stringify(g)}`);
          if (!groups.includes(g)) groups.push(g);
        }
      }
      return { user: { name: `${BOOTSTRAP_USER_PREFIX}${id}`, groups } };
    },
  };
}
