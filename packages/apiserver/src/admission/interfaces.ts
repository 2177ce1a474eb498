/**
 * Admission (model: apiserver `pkg/admission/interfaces.go`): after a request is authenticated, authorized and
 * decoded, and before its object is stored, a chain of plugins looks at it. Mutating plugins run first, in the
 * registry's order, and may change the object; validating plugins run last, on the final object, inside the
 * registry's write (so they see what is about to be stored), and may only accept or refuse.
 *
 * A plugin refuses by throwing a StatusError (usually 403 Forbidden through {@link admissionForbidden}); any other
 * error becomes a 500. Plugins must be safe to call again for the same request: an update whose compare-and-swap
 * lost a race runs admission again on the newer object.
 */
import { type ApiObject, forbidden, type Kind, type Scheme, type StatusError } from '@platform/api';
import { type Logger } from '@platform/common';

import { type Authorizer } from '../auth/authorizer';
import { type RequestContext, type UserInfo } from '../registry/rest/rest';
import { type InternalClient } from './internal-client';

/** The operations admission sees (CONNECT: exec, attach, port-forward, proxy). */
export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/** What admission knows about a request. */
export interface AdmissionAttributes {
  operation: Operation;
  /** The object being written; mutating plugins change it in place. Undefined for DELETE and CONNECT. */
  object: ApiObject | undefined;
  /** The stored object of an UPDATE or DELETE. */
  oldObject: ApiObject | undefined;
  /** The object's name ('' when the server generates it). */
  name: string;
  /** The namespace ('' for cluster-scoped resources). */
  namespace: string;
  /** The kind of the object (the subresource's kind for scale, binding, eviction). */
  kind: { group: string; version: string; kind: string };
  /** The scheme's kind of the object (its schema decodes what a webhook returns). */
  objectKind: Kind;
  /** The resource of the request path. */
  resource: { group: string; version: string; resource: string };
  /** '' for the main resource. */
  subresource: string;
  /** Who sent the request (unset only for internal writes). */
  user: UserInfo | undefined;
  /** `dryRun=All`: nothing is persisted, and plugins must cause no side effects. */
  dryRun: boolean;
  ctx: RequestContext;
}

/** One admission plugin. `admit` mutates (mutating phase), `validate` checks (validating phase); either may be absent. */
export interface AdmissionPlugin {
  readonly name: string;
  /** Whether the plugin wants requests of this operation at all. */
  handles(op: Operation): boolean;
  /**
   * Mutates. A plugin that supports reinvocation resolves true when this request may need it (it ran something that
   * asked to be called again if a later plugin changes the object); anything else means no.
   */
  admit?(a: AdmissionAttributes): Promise<void | boolean>;
  validate?(a: AdmissionAttributes): Promise<void>;
  /**
   * Mutating plugins that support reinvocation (the mutating webhooks): called once after the whole mutating phase
   * when their `admit` asked for it and the object changed since. Resolves true when it changed the object again.
   */
  reinvoke?(a: AdmissionAttributes): Promise<boolean>;
}

/** Settings of the admission options that plugins read. */
export interface AdmissionSettings {
  /** `--default-not-ready-toleration-seconds`. */
  defaultNotReadyTolerationSeconds: number;
  /** `--default-unreachable-toleration-seconds`. */
  defaultUnreachableTolerationSeconds: number;
  /** `--proxy-client-cert-file` / `--proxy-client-key-file` contents (PEM), presented to webhooks. */
  proxyClientCert?: { cert: string; key: string };
  /** Whether the BoundServiceAccountTokenVolume feature is on (token volumes are projected; default true). */
  boundServiceAccountTokenVolume: boolean;
  /** The root CA the service account token volume carries (`ca.crt`). */
  rootCaConfigMap?: string;
}

/** What a plugin factory gets. */
export interface PluginInitContext {
  /** The plugin's configuration from `--admission-control-config-file` (parsed), or undefined. */
  config: unknown;
  /** Reads and writes objects of the server's own registry, without admission. */
  client: InternalClient;
  logger: Logger;
  settings: AdmissionSettings;
  scheme: Scheme;
  now(): number;
  /** Aborted when the server shuts down (plugins with timers stop them). */
  signal?: AbortSignal;
  /** The server's authorizer (CertificateApproval, CertificateSigning); unset: every check passes. */
  authorizer?: Authorizer;
}

/** Builds one plugin; throws with a clear message when its configuration is wrong. */
export type PluginFactory = (c: PluginInitContext) => AdmissionPlugin;

/** 403 Forbidden naming the object, as Kubernetes' `admission.NewForbidden` words it. */
export function admissionForbidden(a: AdmissionAttributes, detail: string): StatusError {
  return forbidden({ group: a.resource.group, resource: a.resource.resource }, a.name, detail);
}

/** Whether the attributes are about the main resource `group`/`resource` (no subresource). */
export function isResource(a: AdmissionAttributes, group: string, resource: string, subresource = ''): boolean {
  return a.resource.group === group && a.resource.resource === resource && a.subresource === subresource;
}

/** Whether `kind` is served (for plugins whose kinds may not exist). */
export function hasKind(scheme: Scheme, group: string, kind: string): boolean {
  return scheme.kinds().some((k: Kind) => k.group === group && k.kind === kind);
}
