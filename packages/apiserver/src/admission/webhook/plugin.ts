/**
 * MutatingAdmissionWebhook and ValidatingAdmissionWebhook (model: apiserver `pkg/admission/plugin/webhook`): the
 * webhooks of the `admissionregistration.platform/v1` configurations, called with an AdmissionReview.
 *
 * - Configurations are read from the watch cache on every request (sorted by name; webhooks in their order).
 * - A webhook is called when a rule, the namespace selector and the object selector match.
 * - A dry-run request that reaches a webhook whose `sideEffects` is not None or NoneOnDryRun fails with 400.
 * - Mutating webhooks run one after the other; a `JSONPatch` response is applied to the object, which must still
 *   decode as its kind. Webhooks with `reinvocationPolicy: IfNeeded` are called once more when a later plugin
 *   changed the object. Validating webhooks run in parallel; the first refusal (in order) wins.
 * - A refusal is the webhook's status (403 by default), worded `admission webhook "<name>" denied the request: ...`.
 * - The `warnings` of a response, allowed or not, become `Warning` headers of the API response (`filters/warning.ts`).
 * - A call that fails (connection, TLS, time-out, an answer that is not a valid AdmissionReview) is ignored with
 *   `failurePolicy: Ignore` and fails the request with 500 otherwise (`failed calling webhook "<name>": ...`).
 */
import {
  type ApiObject,
  badRequest,
  internalError,
  isStatusError,
  type MutatingWebhook,
  type MutatingWebhookConfiguration,
  StatusError,
  type StatusReason,
  type ValidatingWebhook,
  type ValidatingWebhookConfiguration,
} from '@platform/api';
import { type Logger } from '@platform/common';

import { decodeObject } from '../../endpoints/handlers/body';
import { addWarning } from '../../filters/warning';
import { isPatchError, jsonPatch } from '../../patch/patch';
import { type InternalClient } from '../internal-client';
import { type AdmissionAttributes, type AdmissionPlugin, type PluginFactory } from '../interfaces';
import { postJson, resolveTarget, WebhookCallError } from './client';
import { isExempt, namespaceSelectorMatches, objectSelectorMatches, rulesMatch } from './matching';
import { buildReview, parseReviewResponse, reviewVersion } from './review';

export const MUTATING_NAME = 'MutatingAdmissionWebhook';
export const VALIDATING_NAME = 'ValidatingAdmissionWebhook';

type Webhook = MutatingWebhook | ValidatingWebhook;

const GROUP = 'admissionregistration.platform';

/** Replaces the object in place (the handlers hold a reference to it) with what the webhook made of it. */
function replaceContents(target: ApiObject, next: ApiObject): void {
  for (const k of Object.keys(target)) delete (target as Record<string, unknown>)[k];
  Object.assign(target, next);
}

/** One of the two webhook plugins. */
export class WebhookPlugin implements AdmissionPlugin {
  readonly name: string;

  constructor(
    private readonly mutating: boolean,
    private readonly client: InternalClient,
    private readonly logger: Logger,
    private readonly clientCert: { cert: string; key: string } | undefined,
  ) {
    this.name = mutating ? MUTATING_NAME : VALIDATING_NAME;
  }

  handles(): boolean {
    return true;
  }

  /** The webhooks of every configuration, configurations by name. */
  private async webhooks(): Promise<Webhook[]> {
    const resource = this.mutating ? 'mutatingwebhookconfigurations' : 'validatingwebhookconfigurations';
    const gr = { group: GROUP, resource };
    if (!this.client.has(gr)) return [];
    const configs = (await this.client.list(gr, '', { cached: true })) as (
      MutatingWebhookConfiguration | ValidatingWebhookConfiguration
    )[];
    return configs
      .sort((x, y) => (x.metadata?.name ?? '').localeCompare(y.metadata?.name ?? ''))
      .flatMap((c) => c.webhooks ?? []);
  }

  private async matching(a: AdmissionAttributes, filter?: (w: Webhook) => boolean): Promise<Webhook[]> {
    if (isExempt(a)) return [];
    const labelsCache = new Map<string, Record<string, string>>();
    const namespaceLabels = async (name: string): Promise<Record<string, string>> => {
      let l = labelsCache.get(name);
      if (!l) {
        const ns = await this.client.get({ group: '', resource: 'namespaces' }, '', name);
        l = ns?.metadata?.labels ?? {};
        labelsCache.set(name, l);
      }
      return l;
    };
    const out: Webhook[] = [];
    for (const w of await this.webhooks()) {
      if (filter && !filter(w)) continue;
      if (!rulesMatch(w, a)) continue;
      if (!(await namespaceSelectorMatches(w, a, namespaceLabels))) continue;
      if (!objectSelectorMatches(w, a)) continue;
      if (a.dryRun && w.sideEffects !== 'None' && w.sideEffects !== 'NoneOnDryRun') {
        throw badRequest(`admission webhook "${w.name}" does not support dry run`);
      }
      out.push(w);
    }
    return out;
  }

  /** Resolves true when an IfNeeded webhook ran (the chain then reinvokes this plugin if a later plugin changes the object). */
  async admit(a: AdmissionAttributes): Promise<boolean> {
    if (!this.mutating) return false;
    // IfNeeded webhooks are called once more when a later webhook changed the object after they ran.
    const ran: [MutatingWebhook, string][] = [];
    for (const w of (await this.matching(a)) as MutatingWebhook[]) {
      await this.mutate(w, a);
      if (w.reinvocationPolicy === 'IfNeeded') ran.push([w, JSON.stringify(a.object)]);
    }
    if (ran.length === 0) return false;
    const final = JSON.stringify(a.object);
    for (const [w, snapshot] of ran) if (snapshot !== final) await this.mutate(w, a);
    return true;
  }

  async reinvoke(a: AdmissionAttributes): Promise<boolean> {
    if (!this.mutating || !a.object) return false;
    const before = JSON.stringify(a.object);
    const hooks = await this.matching(a, (w) => (w as MutatingWebhook).reinvocationPolicy === 'IfNeeded');
    for (const w of hooks) await this.mutate(w as MutatingWebhook, a);
    return JSON.stringify(a.object) !== before;
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (this.mutating) return;
    const hooks = await this.matching(a);
    const results = await Promise.allSettled(hooks.map((w) => this.call(w, a)));
    for (const r of results) if (r.status === 'rejected') throw r.reason;
  }

  private async mutate(w: MutatingWebhook, a: AdmissionAttributes): Promise<void> {
    const patch = await this.call(w, a);
    if (!patch || !a.object) return;
    let ops: unknown;
    try {
      ops = JSON.parse(Buffer.from(patch, 'base64').toString('utf8'));
    } catch (err) {
      return this.failed(w, new WebhookCallError(`the patch is not base64-encoded JSON: ${(err as Error).message}`));
    }
    let patched: unknown;
    try {
      patched = jsonPatch(a.object, ops);
    } catch (err) {
      if (!isPatchError(err)) throw err;
      return this.failed(w, new WebhookCallError(`the patch cannot be applied: ${err.message}`));
    }
    let obj: ApiObject;
    try {
      obj = decodeObject(patched, a.objectKind);
    } catch (err) {
      const msg = isStatusError(err) ? err.message : String(err);
      return this.failed(w, new WebhookCallError(`the patched object is not valid: ${msg}`));
    }
    replaceContents(a.object, obj);
  }

  /** Calls one webhook; resolves its patch (mutating) or nothing; throws its refusal or, per policy, its failure. */
  private async call(w: Webhook, a: AdmissionAttributes): Promise<string | undefined> {
    const version = reviewVersion(w.admissionReviewVersions ?? []);
    if (!version) {
      return this.failed(
        w,
        new WebhookCallError(
          `none of the AdmissionReview versions ${JSON.stringify(w.admissionReviewVersions)} is supported`,
        ),
      );
    }
    const review = buildReview(a, version);
    let response;
    try {
      const target = await resolveTarget(w.clientConfig, this.client);
      const body = await postJson(target, review, {
        timeoutMs: (w.timeoutSeconds ?? 10) * 1000,
        ...(this.clientCert ? { clientCert: this.clientCert } : {}),
      });
      try {
        response = parseReviewResponse(body, review, this.mutating);
      } catch (err) {
        throw new WebhookCallError(`received an invalid AdmissionReview: ${(err as Error).message}`);
      }
    } catch (err) {
      if (err instanceof WebhookCallError || !isStatusError(err)) {
        return this.failed(w, err instanceof Error ? err : new Error(String(err)));
      }
      throw err;
    }
    // As Kubernetes' dispatchers do, before the verdict: a refusal carries its warnings too.
    for (const w of response.warnings ?? []) addWarning(a.ctx, '', w);
    if (!response.allowed) {
      const s = response.status ?? {};
      const code = typeof s.code === 'number' && s.code >= 400 && s.code < 600 ? s.code : 403;
      const denied = `admission webhook "${w.name}" denied the request`;
      throw new StatusError({
        code,
        reason: (s.reason || (code === 403 ? 'Forbidden' : 'BadRequest')) as StatusReason,
        message: s.message ? `${denied}: ${s.message}` : `${denied} without explanation`,
      });
    }
    return response.patch;
  }

  /** A failed call under the webhook's failure policy: nothing (Ignore) or a 500 (Fail). */
  private failed(w: Webhook, err: Error): undefined {
    const message = `failed calling webhook "${w.name}": ${err.message}`;
    if (w.failurePolicy === 'Ignore') {
      this.logger.warn('Admission webhook failed; ignored by its failure policy', { webhook: w.name, err: message });
      return undefined;
    }
    throw internalError(new Error(message));
  }
}

/** The MutatingAdmissionWebhook factory. */
export const mutatingFactory: PluginFactory = (c) =>
  new WebhookPlugin(true, c.client, c.logger, c.settings.proxyClientCert);
/** The ValidatingAdmissionWebhook factory. */
export const validatingFactory: PluginFactory = (c) =>
  new WebhookPlugin(false, c.client, c.logger, c.settings.proxyClientCert);
