/**
 * The bootstrap signer (model: Kubernetes 1.21 `pkg/controller/bootstrap/bootstrapsigner.go`): keeps, in the
 * ConfigMap `cluster-info` of namespace `public`, one signature `jws-kubeconfig-<token id>` of its `kubeconfig` per
 * bootstrap token Secret (namespace `system`) that allows signing (`usage-bootstrap-signing: "true"`) and has not
 * expired; signatures of other tokens are removed. One key is synced for every change of the ConfigMap or a token
 * Secret. Off by default.
 */
import { type ConfigMap, ConfigMapKind, isConflict, isNotFound, type Secret, SecretKind } from '@platform/api';
import { runWorkers, WorkQueue } from '@platform/client';

import { type ControllerContext, type ControllerDefinition } from '../../controller';
import { unwrapTombstone } from '../util/informers';
import { isBootstrapTokenSecret, secretData, tokenExpiry } from '../util/bootstrap-tokens';
import { waitForSynced } from '../util/wait-synced';
import { computeDetachedSignature } from './jws';

export { computeDetachedSignature, verifyDetachedSignature } from './jws';

/** The publicly readable namespace (Kubernetes' kube-public). */
export const CLUSTER_INFO_NAMESPACE = 'public';
export const CLUSTER_INFO_NAME = 'cluster-info';
/** The key of the client configuration the signatures sign. */
export const KUBECONFIG_KEY = 'kubeconfig';
/** Each signature's key: this prefix and the token id. */
export const JWS_SIGNATURE_PREFIX = 'jws-kubeconfig-';

/** What the signer reads the time from (tests may move it). */
export interface BootstrapSignerConfig {
  now: () => number;
}

/**
 * The signatures `cluster-info` should hold for these tokens, and when the soonest of them expires (epoch ms), for
 * a sync then. Pure.
 */
export function wantedSignatures(
  content: string,
  tokens: readonly Secret[],
  now: number,
): { signatures: Record<string, string>; nextExpiry?: number } {
  const signatures: Record<string, string> = {};
  let nextExpiry: number | undefined;
  for (const s of tokens) {
    if (s.metadata?.deletionTimestamp || secretData(s, 'usage-bootstrap-signing') !== 'true') continue;
    const id = secretData(s, 'token-id');
    const secret = secretData(s, 'token-secret');
    if (!id || !secret) continue;
    const at = tokenExpiry(s);
    if (at !== undefined && at <= now) continue;
    if (at !== undefined) nextExpiry = Math.min(nextExpiry ?? at, at);
    signatures[`${JWS_SIGNATURE_PREFIX}${id}`] = computeDetachedSignature(content, id, secret);
  }
  return { signatures, ...(nextExpiry !== undefined ? { nextExpiry } : {}) };
}

async function run(ctx: ControllerContext, o: BootstrapSignerConfig): Promise<void> {
  const secrets = ctx.informers.informerFor(SecretKind);
  const configMaps = ctx.informers.informerFor(ConfigMapKind);
  const KEY = 'cluster-info';
  const queue = new WorkQueue<string>({ name: 'bootstrap_signer_queue', metrics: ctx.metrics });
  ctx.signal.addEventListener('abort', () => queue.shutDown(), { once: true });
  const onSecret = (s: Secret): void => {
    if (isBootstrapTokenSecret(s)) queue.add(KEY);
  };
  const onConfigMap = (cm: ConfigMap): void => {
    if (cm.metadata?.namespace === CLUSTER_INFO_NAMESPACE && cm.metadata.name === CLUSTER_INFO_NAME) queue.add(KEY);
  };
  secrets.addEventHandler({
    onAdd: onSecret,
    onUpdate: (_old, s) => onSecret(s),
    onDelete: (s) => onSecret(unwrapTombstone(s)),
  });
  configMaps.addEventHandler({ onAdd: onConfigMap, onUpdate: (_old, cm) => onConfigMap(cm) });

  const sync = async (): Promise<void> => {
    const cm: ConfigMap | undefined = configMaps.indexer.get(`${CLUSTER_INFO_NAMESPACE}/${CLUSTER_INFO_NAME}`);
    const content = cm?.data?.[KUBECONFIG_KEY];
    if (!cm || content === undefined) return;
    const tokens = secrets.indexer.list().filter(isBootstrapTokenSecret);
    const { signatures, nextExpiry } = wantedSignatures(content, tokens, o.now());
    if (nextExpiry !== undefined) queue.addAfter(KEY, Math.max(0, nextExpiry - o.now()) + 1);
    const data: Record<string, string> = {};
    for (const [k, v] of Object.entries(cm.data ?? {})) if (!k.startsWith(JWS_SIGNATURE_PREFIX)) data[k] = v;
    Object.assign(data, signatures);
    const before = cm.data ?? {};
    const same =
      Object.keys(before).length === Object.keys(data).length &&
      Object.entries(data).every(([k, v]) => before[k] === v);
    if (same) return;
    try {
      await ctx.client.resource(ConfigMapKind, CLUSTER_INFO_NAMESPACE).update({ ...cm, data }, { signal: ctx.signal });
    } catch (err) {
      if (isNotFound(err)) return;
      if (isConflict(err)) throw err; // again, on the newer ConfigMap its event brings
      throw err;
    }
  };

  if (!(await waitForSynced(ctx.signal, [secrets, configMaps]))) return;
  queue.add(KEY);
  await runWorkers(queue, 1, sync, (_key, err) => {
    if (!ctx.signal.aborted) ctx.logger.warn('Could not sign cluster-info', { error: String(err) });
  });
}

/** The `bootstrapsigner` controller (off unless named in `--controllers`, as in Kubernetes). */
export const bootstrapSignerController: ControllerDefinition<BootstrapSignerConfig> = {
  name: 'bootstrapsigner',
  enabledByDefault: false,
  serviceAccount: 'bootstrap-signer',
  run: (ctx, o) => run(ctx, { now: o?.now ?? Date.now }),
};
