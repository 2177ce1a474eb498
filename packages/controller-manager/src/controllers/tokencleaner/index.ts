/**
 * The token cleaner (model: Kubernetes 1.21 `pkg/controller/bootstrap/tokencleaner.go`): deletes the bootstrap
 * token Secrets of namespace `system` whose `expiration` has passed (an unparseable one counts as passed), at the
 * moment it passes; Secrets without `expiration` stay. The delete names the Secret's UID, so a Secret made again
 * under the same name is not taken with it. Off by default.
 */
import { isConflict, isNotFound, type Secret, SecretKind } from '@platform/api';
import { metaNamespaceKey, runWorkers, WorkQueue } from '@platform/client';

import { type ControllerContext, type ControllerDefinition } from '../../controller';
import { BOOTSTRAP_TOKEN_NAMESPACE, isBootstrapTokenSecret, tokenExpiry } from '../util/bootstrap-tokens';
import { waitForSynced } from '../util/wait-synced';

/** What the token cleaner reads the time from (tests may move it). */
export interface TokenCleanerConfig {
  now: () => number;
}

async function run(ctx: ControllerContext, o: TokenCleanerConfig): Promise<void> {
  const secrets = ctx.informers.informerFor(SecretKind);
  const queue = new WorkQueue<string>({ name: 'token_cleaner', metrics: ctx.metrics });
  ctx.signal.addEventListener('abort', () => queue.shutDown(), { once: true });
  const enqueue = (s: Secret): void => {
    if (isBootstrapTokenSecret(s)) queue.add(metaNamespaceKey(s));
  };
  secrets.addEventHandler({ onAdd: enqueue, onUpdate: (_old, s) => enqueue(s) });

  const sync = async (key: string): Promise<void> => {
    const secret: Secret | undefined = secrets.indexer.get(key);
    if (!secret || !isBootstrapTokenSecret(secret) || secret.metadata?.deletionTimestamp) return;
    const at = tokenExpiry(secret);
    if (at === undefined) return;
    const left = at - o.now();
    if (left > 0) {
      queue.addAfter(key, left);
      return;
    }
    try {
      await ctx.client
        .resource(SecretKind, BOOTSTRAP_TOKEN_NAMESPACE)
        .delete(secret.metadata?.name ?? '', { preconditions: { uid: secret.metadata?.uid }, signal: ctx.signal });
      ctx.logger.info('Deleted expired bootstrap token Secret', { secret: key });
    } catch (err) {
      // Gone already, or replaced by a Secret of the same name (its own events bring it here).
      if (isNotFound(err) || isConflict(err)) return;
      throw err;
    }
  };

  if (!(await waitForSynced(ctx.signal, [secrets]))) return;
  await runWorkers(queue, 1, sync, (key, err) => {
    if (!ctx.signal.aborted)
      ctx.logger.warn('Could not delete an expired bootstrap token Secret', { secret: key, error: String(err) });
  });
}

/** The `tokencleaner` controller (off unless named in `--controllers`, as in Kubernetes). */
export const tokenCleanerController: ControllerDefinition<TokenCleanerConfig> = {
  name: 'tokencleaner',
  enabledByDefault: false,
  serviceAccount: 'token-cleaner',
  run: (ctx, o) => run(ctx, { now: o?.now ?? Date.now }),
};
