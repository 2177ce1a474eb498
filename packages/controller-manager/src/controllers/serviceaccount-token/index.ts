/**
 * The service account token controller (model: Kubernetes 1.21 `pkg/controller/serviceaccount/tokens_controller.go`):
 * every ServiceAccount gets a Secret `<account>-token-<5 characters>` of type `kubernetes.io/service-account-token`
 * holding a legacy token signed with `--service-account-private-key-file`, the root CA (`ca.crt`, from
 * `--root-ca-file` or the client configuration) and its `namespace`, referenced from the account's `secrets`. Token
 * Secrets whose account is gone (or was made again, with another UID) are deleted; one missing its token, CA or
 * namespace is completed. Without a private key the controller does not run, as in 1.21.
 *
 * Before creating a Secret the account is read from the API, not the cache, so an account whose cache entry has not
 * yet seen the reference just added does not get a second Secret.
 */
import { readFileSync } from 'node:fs';
import { type KeyObject } from 'node:crypto';

import {
  isConflict,
  isNotFound,
  type Secret,
  SecretKind,
  type ServiceAccount,
  ServiceAccountKind,
} from '@platform/api';
import { metaNamespaceKey, runWorkers, WorkQueue } from '@platform/client';

import { type ControllerContext, type ControllerDefinition } from '../../controller';
import { unwrapTombstone } from '../util/informers';
import { waitForSynced } from '../util/wait-synced';
import { type ServiceAccountTokenConfig, ServiceAccountTokenOptions } from './options';
import { loadSigningKey, signLegacyToken } from './token';

export { ServiceAccountTokenOptions, type ServiceAccountTokenConfig } from './options';
export { signLegacyToken, loadSigningKey, LEGACY_ISSUER } from './token';

export const SERVICE_ACCOUNT_TOKEN_TYPE = 'kubernetes.io/service-account-token';
export const SERVICE_ACCOUNT_NAME_ANNOTATION = 'kubernetes.io/service-account.name';
export const SERVICE_ACCOUNT_UID_ANNOTATION = 'kubernetes.io/service-account.uid';
/** Kubernetes' `utilrand.String` alphabet (no vowels, no confusable digits). */
const ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

function randomSuffix(n = 5): string {
  let s = '';
  for (let i = 0; i < n; i++) s += ALPHABET[Math.floor(Math.random() * ALPHABET.length)];
  return s;
}

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const unb64 = (s: string | undefined): string | undefined =>
  s === undefined ? undefined : Buffer.from(s, 'base64').toString('utf8');

/** Whether `secret` is a token Secret of the account (its name, and its UID when the Secret names one). */
export function isTokenOf(secret: Secret, sa: ServiceAccount): boolean {
  const a = secret.metadata?.annotations ?? {};
  return (
    secret.type === SERVICE_ACCOUNT_TOKEN_TYPE &&
    secret.metadata?.namespace === sa.metadata?.namespace &&
    a[SERVICE_ACCOUNT_NAME_ANNOTATION] === sa.metadata?.name &&
    // A Secret without a UID belongs to any account of its name (1.21's IsServiceAccountToken).
    (!a[SERVICE_ACCOUNT_UID_ANNOTATION] || a[SERVICE_ACCOUNT_UID_ANNOTATION] === sa.metadata?.uid)
  );
}

class TokensController {
  private readonly accounts;
  private readonly secrets;
  readonly accountQueue: WorkQueue<string>;
  readonly secretQueue: WorkQueue<string>;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly key: KeyObject,
    private readonly ca: string | undefined,
  ) {
    this.accounts = ctx.informers.informerFor(ServiceAccountKind);
    this.secrets = ctx.informers.informerFor(SecretKind);
    this.accountQueue = new WorkQueue<string>({ name: 'serviceaccount_tokens_service', metrics: ctx.metrics });
    this.secretQueue = new WorkQueue<string>({ name: 'serviceaccount_tokens_secret', metrics: ctx.metrics });
    const addAccount = (sa: ServiceAccount): void => this.accountQueue.add(metaNamespaceKey(sa));
    this.accounts.addEventHandler({
      onAdd: addAccount,
      onUpdate: (_old, sa) => addAccount(sa),
      onDelete: (sa) => addAccount(unwrapTombstone(sa)),
    });
    const addSecret = (s: Secret): void => {
      if (s.type === SERVICE_ACCOUNT_TOKEN_TYPE) this.secretQueue.add(metaNamespaceKey(s));
    };
    this.secrets.addEventHandler({
      onAdd: addSecret,
      onUpdate: (_old, s) => addSecret(s),
      onDelete: (obj) => {
        // The account gets a new token (and loses the reference) when its Secret goes.
        const s = unwrapTombstone(obj);
        const name = s.metadata?.annotations?.[SERVICE_ACCOUNT_NAME_ANNOTATION];
        if (s.type === SERVICE_ACCOUNT_TOKEN_TYPE && name) this.accountQueue.add(`${s.metadata?.namespace}/${name}`);
      },
    });
  }

  synced(): Promise<boolean> {
    return waitForSynced(this.ctx.signal, [this.accounts, this.secrets]);
  }

  private get signal(): AbortSignal {
    return this.ctx.signal;
  }

  /** The account: from the cache, else (a cache that lags) from the API; undefined when it does not exist. */
  private async liveAccount(namespace: string, name: string): Promise<ServiceAccount | undefined> {
    try {
      return await this.ctx.client.resource(ServiceAccountKind, namespace).get(name, { signal: this.signal });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  private async liveSecret(namespace: string, name: string): Promise<Secret | undefined> {
    const cached: Secret | undefined = this.secrets.indexer.get(`${namespace}/${name}`);
    if (cached) return cached;
    try {
      return await this.ctx.client.resource(SecretKind, namespace).get(name, { signal: this.signal });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  private async deleteSecret(s: Secret): Promise<void> {
    try {
      await this.ctx.client
        .resource(SecretKind, s.metadata?.namespace ?? '')
        .delete(s.metadata?.name ?? '', { preconditions: { uid: s.metadata?.uid }, signal: this.signal });
    } catch (err) {
      if (!isNotFound(err) && !isConflict(err)) throw err;
    }
  }

  /**
   * An account: token Secrets of an account of that name that is gone (or another UID: made again) are deleted;
   * an account without a valid token Secret gets one. The account is read from the API: the cache may not show a
   * delete and re-create under one name, or the reference the last sync added.
   */
  readonly syncAccount = async (key: string): Promise<void> => {
    const [namespace = '', name = ''] = key.split('/');
    const sa = await this.liveAccount(namespace, name);
    for (const s of this.secrets.indexer.list()) {
      const a = s.metadata?.annotations ?? {};
      if (
        s.type === SERVICE_ACCOUNT_TOKEN_TYPE &&
        s.metadata?.namespace === namespace &&
        a[SERVICE_ACCOUNT_NAME_ANNOTATION] === name &&
        (!sa || (a[SERVICE_ACCOUNT_UID_ANNOTATION] && a[SERVICE_ACCOUNT_UID_ANNOTATION] !== sa.metadata?.uid))
      )
        await this.deleteSecret(s);
    }
    if (!sa || sa.metadata?.deletionTimestamp) return;
    const refs = sa.secrets ?? [];
    const existing = await Promise.all(refs.map(async (r) => this.liveSecret(namespace, r.name ?? '')));
    if (existing.some((s) => s && isTokenOf(s, sa))) return;
    await this.createToken(
      sa,
      refs.filter((_r, i) => existing[i] !== undefined),
    );
  };

  private async createToken(sa: ServiceAccount, keptRefs: NonNullable<ServiceAccount['secrets']>): Promise<void> {
    const namespace = sa.metadata?.namespace ?? '';
    const name = sa.metadata?.name ?? '';
    const secretName = `${name}-token-${randomSuffix()}`;
    const token = signLegacyToken(this.key, namespace, secretName, { name, uid: sa.metadata?.uid ?? '' });
    const secrets = this.ctx.client.resource(SecretKind, namespace);
    const created = await secrets.create(
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: secretName,
          namespace,
          annotations: {
            [SERVICE_ACCOUNT_NAME_ANNOTATION]: name,
            [SERVICE_ACCOUNT_UID_ANNOTATION]: sa.metadata?.uid ?? '',
          },
        },
        type: SERVICE_ACCOUNT_TOKEN_TYPE,
        data: this.tokenData(token, namespace),
      },
      { signal: this.signal },
    );
    try {
      await this.ctx.client
        .resource(ServiceAccountKind, namespace)
        .update({ ...sa, secrets: [...keptRefs, { name: secretName }] }, { signal: this.signal });
      this.ctx.logger.info('Created service account token Secret', { namespace, serviceAccount: name, secretName });
    } catch (err) {
      // Not referenced: it would be a token nobody knows of (the account changed or went); try again from scratch.
      await this.deleteSecret(created);
      throw err;
    }
  }

  private tokenData(token: string, namespace: string): Record<string, string> {
    return { token: b64(token), namespace: b64(namespace), ...(this.ca ? { 'ca.crt': b64(this.ca) } : {}) };
  }

  /** A token Secret: deleted when its account is gone, completed when it lacks its token, CA or namespace. */
  readonly syncSecret = async (key: string): Promise<void> => {
    const s: Secret | undefined = this.secrets.indexer.get(key);
    if (!s || s.type !== SERVICE_ACCOUNT_TOKEN_TYPE || s.metadata?.deletionTimestamp) return;
    const namespace = s.metadata?.namespace ?? '';
    const name = s.metadata?.annotations?.[SERVICE_ACCOUNT_NAME_ANNOTATION] ?? '';
    const uid = s.metadata?.annotations?.[SERVICE_ACCOUNT_UID_ANNOTATION];
    const cached: ServiceAccount | undefined = this.accounts.indexer.get(`${namespace}/${name}`);
    const sa = cached?.metadata?.uid === uid ? cached : await this.liveAccount(namespace, name);
    if (!sa || (uid && sa.metadata?.uid !== uid)) {
      await this.deleteSecret(s);
      this.ctx.logger.info('Deleted the token Secret of a deleted service account', { secret: key });
      return;
    }
    const data = s.data ?? {};
    const wantCA = this.ca;
    const complete =
      data.token !== undefined &&
      unb64(data.namespace) === namespace &&
      (wantCA === undefined || unb64(data['ca.crt']) === wantCA);
    if (complete) return;
    const token =
      unb64(data.token) ??
      signLegacyToken(this.key, namespace, s.metadata?.name ?? '', {
        name,
        uid: sa.metadata?.uid ?? '',
      });
    await this.ctx.client
      .resource(SecretKind, namespace)
      .update({ ...s, data: { ...data, ...this.tokenData(token, namespace) } }, { signal: this.signal });
  };
}

async function run(ctx: ControllerContext, o: ServiceAccountTokenConfig): Promise<void> {
  if (!o.privateKeyFile) {
    ctx.logger.warn('serviceaccount-token is disabled: no --service-account-private-key-file');
    await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
    return;
  }
  let key: KeyObject;
  try {
    key = loadSigningKey(readFileSync(o.privateKeyFile));
  } catch (err) {
    throw new Error(`--service-account-private-key-file: cannot use ${o.privateKeyFile}: ${(err as Error).message}`);
  }
  const ca = o.rootCAFile ? readFileSync(o.rootCAFile, 'utf8') : ctx.rootCA?.toString('utf8');
  const c = new TokensController(ctx, key, ca);
  ctx.signal.addEventListener(
    'abort',
    () => {
      c.accountQueue.shutDown();
      c.secretQueue.shutDown();
    },
    { once: true },
  );
  if (!(await c.synced())) return;
  const onError = (what: string) => (key: string, err: unknown) => {
    if (!ctx.signal.aborted) ctx.logger.warn(`Could not sync a ${what}, retrying`, { key, error: String(err) });
  };
  await Promise.all([
    runWorkers(c.accountQueue, o.workers, c.syncAccount, onError('service account')),
    runWorkers(c.secretQueue, o.workers, c.syncSecret, onError('service account token Secret')),
  ]);
}

/** The `serviceaccount-token` controller. */
export const serviceAccountTokenController: ControllerDefinition<ServiceAccountTokenConfig> = {
  name: 'serviceaccount-token',
  enabledByDefault: true,
  // As in 1.21, it always acts as the controller manager: it writes token Secrets in every namespace.
  serviceAccount: false,
  options: () => new ServiceAccountTokenOptions(),
  run,
};
