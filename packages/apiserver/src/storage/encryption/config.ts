/**
 * `--encryption-provider-config`: an `EncryptionConfiguration` of `apiserver.config.platform/v1` (Kubernetes'
 * `apiserver.config.k8s.io/v1` is read too), YAML or JSON, validated as Kubernetes 1.21 validates it, every problem
 * reported with the field that has it.
 *
 * ```yaml
 * apiVersion: apiserver.config.platform/v1
 * kind: EncryptionConfiguration
 * resources:
 *   - resources: [secrets, configmaps]
 *     providers:
 *       - aescbc: { keys: [{ name: key1, secret: <32 bytes, base64> }] }
 *       - identity: {}
 * ```
 *
 * Resources are `resource` (core) or `resource.group`; groups spelled `.k8s.io` mean the `.platform` ones.
 */
import { readFileSync } from 'node:fs';
import { parseDuration } from '@platform/common';
import * as yaml from 'js-yaml';
import type * as Kms from './kms';
import {
  aescbcTransformer,
  aesgcmTransformer,
  identityTransformer,
  type PrefixedTransformer,
  PrefixTransformers,
  providerPrefix,
  secretboxTransformer,
  type ValueTransformer,
} from './providers';

const API_VERSIONS = ['apiserver.config.platform/v1', 'apiserver.config.k8s.io/v1'];
const KEY_SIZES: Record<string, number[]> = { aescbc: [16, 24, 32], aesgcm: [16, 24, 32], secretbox: [32] };
const PROVIDERS = ['kms', 'aesgcm', 'aescbc', 'secretbox', 'identity'] as const;
const DEFAULT_KMS_CACHE_SIZE = 1000;
const DEFAULT_KMS_TIMEOUT_MS = 3000;

/** The encryption of each resource that has one. */
export interface EncryptionConfig {
  /** The transformer of `resource` in `group` (`''`: core), or undefined: stored in clear. */
  transformerFor(group: string, resource: string): ValueTransformer | undefined;
  /** Closes the KMS plugins' connections. */
  close(): void;
}

/** Reads and validates the file; throws one error listing every problem. */
export function loadEncryptionConfig(path: string): EncryptionConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`--encryption-provider-config: cannot read ${path}: ${(err as Error).message}`);
  }
  return parseEncryptionConfig(text, path);
}

/** Parses and validates an `EncryptionConfiguration`; throws one error listing every problem. */
export function parseEncryptionConfig(text: string, source = 'encryption configuration'): EncryptionConfig {
  let doc: unknown;
  try {
    doc = yaml.load(text);
  } catch (err) {
    throw new Error(`--encryption-provider-config: ${source}: not valid YAML or JSON: ${(err as Error).message}`);
  }
  const errs: string[] = [];
  const byResource = new Map<string, PrefixedTransformer[]>();
  const services: Kms.KmsService[] = [];
  if (!isObject(doc)) errs.push('the file must hold an EncryptionConfiguration object');
  else {
    if (doc.kind !== 'EncryptionConfiguration')
      errs.push(`kind: must be EncryptionConfiguration, got ${show(doc.kind)}`);
    if (!API_VERSIONS.includes(String(doc.apiVersion)))
      errs.push(`apiVersion: must be one of ${API_VERSIONS.join(', ')}, got ${show(doc.apiVersion)}`);
    const resources = doc.resources;
    if (!Array.isArray(resources) || resources.length === 0) errs.push('resources: at least one entry is required');
    else {
      for (const [i, entry] of resources.entries()) {
        const path = `resources[${i}]`;
        if (!isObject(entry)) {
          errs.push(`${path}: must be an object`);
          continue;
        }
        const names = entry.resources;
        if (!Array.isArray(names) || names.length === 0)
          errs.push(`${path}.resources: at least one resource has to be specified`);
        const transformers = providersOf(entry.providers, `${path}.providers`, errs, services);
        for (const [j, name] of (Array.isArray(names) ? names : []).entries()) {
          if (typeof name !== 'string' || !/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(name)) {
            errs.push(`${path}.resources[${j}]: ${show(name)} is not a resource name (resource or resource.group)`);
            continue;
          }
          const id = groupResource(name);
          byResource.set(id, [...(byResource.get(id) ?? []), ...transformers]);
        }
      }
    }
  }
  if (errs.length > 0) {
    for (const s of services) s.close();
    throw new Error(`--encryption-provider-config: ${source}:\n  ${errs.join('\n  ')}`);
  }
  const transformers = new Map([...byResource].map(([id, ts]) => [id, new PrefixTransformers(ts)]));
  return {
    transformerFor: (group, resource) => transformers.get(group ? `${resource}.${group}` : resource),
    close: () => services.forEach((s) => s.close()),
  };
}

/** `resource.group` with `.k8s.io` renamed `.platform`; core resources bare. */
function groupResource(name: string): string {
  const dot = name.indexOf('.');
  if (dot < 0) return name;
  const group = name.slice(dot + 1).replace(/(^|\.)k8s\.io$/, '$1platform');
  return `${name.slice(0, dot)}.${group}`;
}

function providersOf(
  providers: unknown,
  path: string,
  errs: string[],
  services: Kms.KmsService[],
): PrefixedTransformer[] {
  if (!Array.isArray(providers) || providers.length === 0) {
    errs.push(`${path}: at least one provider has to be specified`);
    return [];
  }
  const out: PrefixedTransformer[] = [];
  for (const [i, p] of providers.entries()) {
    const at = `${path}[${i}]`;
    if (!isObject(p)) {
      errs.push(`${at}: must be an object`);
      continue;
    }
    const kinds = Object.keys(p).filter((k) => (PROVIDERS as readonly string[]).includes(k));
    const unknown = Object.keys(p).filter((k) => !kinds.includes(k));
    if (unknown.length > 0)
      errs.push(`${at}: unknown provider ${unknown.join(', ')} (expected one of ${PROVIDERS.join(', ')})`);
    if (kinds.length > 1) {
      errs.push(
        `${at}: more than one provider specified in a single element, should split into different list elements`,
      );
      continue;
    }
    if (kinds.length === 0) {
      errs.push(`${at}: provider does not contain any of the expected providers: ${PROVIDERS.join(', ')}`);
      continue;
    }
    const kind = kinds[0] as (typeof PROVIDERS)[number];
    const body = p[kind] ?? {};
    if (!isObject(body)) {
      errs.push(`${at}.${kind}: must be an object`);
      continue;
    }
    if (kind === 'identity') out.push(identityTransformer);
    else if (kind === 'kms') {
      const kms = kmsProvider(body, `${at}.kms`, errs);
      if (kms) {
        // Loaded here: the KMS client (gRPC) is a tenth of a second of every start, and few servers use KMS.
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const { KmsService, kmsTransformer } = require('./kms') as typeof Kms;
        const service = new KmsService(kms);
        services.push(service);
        out.push(kmsTransformer(providerPrefix('kms', kms.name), service, kms.cachesize));
      }
    } else out.push(...keyTransformers(kind, body, `${at}.${kind}`, errs));
  }
  return out;
}

function keyTransformers(
  kind: 'aescbc' | 'aesgcm' | 'secretbox',
  body: Record<string, unknown>,
  at: string,
  errs: string[],
): PrefixedTransformer[] {
  const keys = body.keys;
  if (!Array.isArray(keys) || keys.length === 0) {
    errs.push(`${at}.keys: at least one key has to be specified`);
    return [];
  }
  const out: PrefixedTransformer[] = [];
  const seen = new Set<string>();
  for (const [i, k] of keys.entries()) {
    const kp = `${at}.keys[${i}]`;
    if (!isObject(k)) {
      errs.push(`${kp}: must be an object`);
      continue;
    }
    const name = k.name;
    const before = errs.length;
    if (typeof name !== 'string' || name === '') errs.push(`${kp}.name: key name is required`);
    else if (name.includes(':')) errs.push(`${kp}.name: key name should not contain ':'`);
    else if (seen.has(name)) errs.push(`${kp}.name: duplicate key name ${show(name)}`);
    const secret = typeof k.secret === 'string' ? decodeBase64(k.secret) : undefined;
    if (k.secret === undefined || k.secret === '') errs.push(`${kp}.secret: secret is required`);
    else if (!secret) errs.push(`${kp}.secret: secret is not valid base64`);
    else if (!KEY_SIZES[kind]!.includes(secret.length))
      errs.push(
        `${kp}.secret: secret is not of the expected length, got ${secret.length}, expected one of [${KEY_SIZES[kind]!.join(' ')}]`,
      );
    if (errs.length > before || !secret) continue;
    seen.add(name as string);
    const prefix = providerPrefix(kind, name as string);
    if (kind === 'aescbc') out.push(aescbcTransformer(prefix, secret));
    else if (kind === 'aesgcm') out.push(aesgcmTransformer(prefix, secret));
    else out.push(secretboxTransformer(prefix, secret));
  }
  return out;
}

function kmsProvider(
  body: Record<string, unknown>,
  at: string,
  errs: string[],
): { name: string; endpoint: string; cachesize: number; timeoutMs: number } | undefined {
  const before = errs.length;
  const { name, endpoint } = body;
  if (typeof name !== 'string' || name === '') errs.push(`${at}.name: name is required`);
  else if (name.includes(':')) errs.push(`${at}.name: name should not contain ':'`);
  if (typeof endpoint !== 'string' || endpoint === '') errs.push(`${at}.endpoint: endpoint is required`);
  else if (!endpoint.startsWith('unix://') || endpoint.length <= 'unix://'.length)
    errs.push(`${at}.endpoint: unsupported scheme in ${show(endpoint)}: for KMS providers only unix:// is supported`);
  let cachesize = DEFAULT_KMS_CACHE_SIZE;
  if (body.cachesize !== undefined) {
    if (!Number.isInteger(body.cachesize) || (body.cachesize as number) <= 0)
      errs.push(`${at}.cachesize: cachesize should be a positive integer, got ${show(body.cachesize)}`);
    else cachesize = body.cachesize as number;
  }
  let timeoutMs = DEFAULT_KMS_TIMEOUT_MS;
  if (body.timeout !== undefined) {
    let ms: number | undefined;
    try {
      ms = typeof body.timeout === 'string' ? parseDuration(body.timeout) : undefined;
    } catch {
      ms = undefined;
    }
    if (ms === undefined || ms <= 0)
      errs.push(`${at}.timeout: timeout should be a positive duration such as 3s, got ${show(body.timeout)}`);
    else timeoutMs = ms;
  }
  if (errs.length > before) return undefined;
  return { name: name as string, endpoint: endpoint as string, cachesize, timeoutMs };
}

function decodeBase64(s: string): Buffer | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s) || s.length % 4 !== 0) return undefined;
  return Buffer.from(s, 'base64');
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function show(v: unknown): string {
  return v === undefined ? 'nothing' : JSON.stringify(v);
}
