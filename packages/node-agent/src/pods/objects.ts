/**
 * ConfigMaps, Secrets and service-account tokens as the pod workers read them: a small cache in front of the API
 * (model: kubelet's TTL-based `configmap`/`secret` managers and `token/token_manager.go`). An object is fetched again
 * after `ttlMs` (a minute by default), so a changed ConfigMap reaches its volumes within a minute plus a sync period;
 * tokens are requested again at 80% of their lifetime or after 24 hours.
 */
import {
  type ApiObject,
  type ConfigMap,
  ConfigMapKind,
  type Secret,
  SecretKind,
  ServiceAccountKind,
} from '@platform/api';
import { type Clientset } from '@platform/client';

interface Entry<T> {
  at: number;
  value: Promise<T>;
}

/** A token of the TokenRequest API. */
export interface ServiceAccountToken {
  token: string;
  /** Milliseconds since the epoch. */
  expiresAt: number;
  /** When it was obtained. */
  issuedAt: number;
}

/** Reads ConfigMaps, Secrets and tokens for pods, with a time-to-live cache. Errors are the client's StatusErrors. */
export class ObjectCache {
  private readonly entries = new Map<string, Entry<unknown>>();
  private readonly tokens = new Map<string, ServiceAccountToken>();

  constructor(
    private readonly clientset: Clientset | undefined,
    private readonly ttlMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  private get<T>(key: string, fetch: () => Promise<T>): Promise<T> {
    const e = this.entries.get(key) as Entry<T> | undefined;
    if (e && this.now() - e.at < this.ttlMs) return e.value;
    const value = fetch();
    this.entries.set(key, { at: this.now(), value });
    value.catch(() => this.entries.delete(key));
    return value;
  }

  private client(): Clientset {
    if (!this.clientset) throw new Error('no API server (standalone mode): ConfigMaps, Secrets and tokens are unknown');
    return this.clientset;
  }

  /** A ConfigMap; throws NotFound when absent. */
  configMap(namespace: string, name: string): Promise<ConfigMap> {
    return this.get(`cm/${namespace}/${name}`, () =>
      this.client()
        .resource(ConfigMapKind, namespace)
        .get(name)
        .then((o) => o as ConfigMap),
    );
  }

  /** A Secret; throws NotFound when absent. */
  secret(namespace: string, name: string): Promise<Secret> {
    return this.get(`secret/${namespace}/${name}`, () =>
      this.client()
        .resource(SecretKind, namespace)
        .get(name)
        .then((o) => o as Secret),
    );
  }

  /** A token for `serviceAccount` bound to the pod, requested again when 80% of its life has passed. */
  async token(
    pod: { namespace: string; name: string; uid: string },
    serviceAccount: string,
    audience: string | undefined,
    expirationSeconds: number,
  ): Promise<ServiceAccountToken> {
    const key = `${pod.uid}/${serviceAccount}/${audience ?? ''}/${expirationSeconds}`;
    const have = this.tokens.get(key);
    const now = this.now();
    if (have && now < have.issuedAt + Math.min(0.8 * (have.expiresAt - have.issuedAt), 24 * 3600_000)) return have;
    const body = {
      apiVersion: 'authentication.platform/v1',
      kind: 'TokenRequest',
      spec: {
        ...(audience ? { audiences: [audience] } : {}),
        expirationSeconds,
        boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod.name, uid: pod.uid },
      },
    } as unknown as ApiObject;
    const res = (await this.client()
      .resource(ServiceAccountKind, pod.namespace)
      .createSubresource(serviceAccount, 'token', body)) as unknown as {
      status?: { token?: string; expirationTimestamp?: string };
    };
    const token = res.status?.token ?? '';
    const expiresAt = res.status?.expirationTimestamp
      ? Date.parse(res.status.expirationTimestamp)
      : now + expirationSeconds * 1000;
    const t = { token, expiresAt, issuedAt: now };
    this.tokens.set(key, t);
    return t;
  }

  /** Forgets the tokens of a pod that is gone. */
  forgetPod(uid: string): void {
    for (const k of this.tokens.keys()) if (k.startsWith(`${uid}/`)) this.tokens.delete(k);
  }
}
