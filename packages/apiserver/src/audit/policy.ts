/**
 * The audit policy (model: apiserver `pkg/audit/policy/{reader,checker}.go` and `apis/audit/validation`): a file in
 * YAML or JSON holding an `audit.platform/v1` (or `v1beta1`) Policy, validated when it is loaded, and the evaluator
 * that gives each request its level and omitted stages: the first rule that matches decides; no match means None.
 *
 * Matching, as Kubernetes: `users`, `userGroups` (any group) and `verbs` must hold when given; a rule with
 * `namespaces` or `resources` matches resource requests only (`namespaces` compares the request's namespace, '' for
 * cluster-scoped ones; `resources` entries match by group then by `resource`, `resource/subresource`, `*`,
 * `*\/subresource` or `resource/*`, limited to `resourceNames` when given); a rule with `nonResourceURLs` matches
 * non-resource requests only (`*` alone, an exact path, or a prefix ending in `*`). `omitManagedFields` arrived after
 * Kubernetes 1.21 and, like any unknown field, is ignored with a warning.
 */
import { readFileSync } from 'node:fs';

import * as yaml from 'js-yaml';

import { type Attributes } from '../auth/authorizer';
import {
  AUDIT_GROUP,
  type GroupResources,
  type Level,
  LEVELS,
  type Policy,
  type PolicyRule,
  type Stage,
  STAGES,
} from './types';

/** The policy versions a file may use. */
export const POLICY_VERSIONS: readonly string[] = [`${AUDIT_GROUP}/v1`, `${AUDIT_GROUP}/v1beta1`];

/** A policy that cannot be used; the message names the file and the field. */
export class PolicyError extends Error {
  override readonly name = 'PolicyError';
}

/** What a request is audited at. */
export interface PolicyDecision {
  level: Level;
  /** Stages not written for this request (the policy's and the rule's). */
  omitStages: ReadonlySet<Stage>;
}

/** Gives each request its audit level. */
export interface PolicyEvaluator {
  evaluate(a: Attributes): PolicyDecision;
}

const RULE_FIELDS = new Set([
  'level',
  'users',
  'userGroups',
  'verbs',
  'resources',
  'namespaces',
  'nonResourceURLs',
  'omitStages',
]);
const POLICY_FIELDS = new Set(['apiVersion', 'kind', 'metadata', 'rules', 'omitStages']);
const GROUP_RESOURCE_FIELDS = new Set(['group', 'resources', 'resourceNames']);
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A list of strings at `field`, or an error. */
function strings(v: unknown, field: string, errs: string[]): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((s) => typeof s !== 'string')) {
    errs.push(`${field}: must be a list of strings`);
    return undefined;
  }
  return v as string[];
}

function stages(v: unknown, field: string, errs: string[]): Stage[] | undefined {
  const list = strings(v, field, errs);
  if (!list) return undefined;
  list.forEach((s, i) => {
    if (!(STAGES as readonly string[]).includes(s))
      errs.push(`${field}[${i}]: Unsupported value: ${JSON.stringify(s)}: supported values: ${STAGES.join(', ')}`);
  });
  return list as Stage[];
}

function unknownFields(obj: Record<string, unknown>, known: Set<string>, field: string, warnings: string[]): void {
  for (const k of Object.keys(obj))
    if (!known.has(k)) warnings.push(`${field ? `${field}.` : ''}${k}: unknown field, ignored`);
}

function parseRule(v: unknown, field: string, errs: string[], warnings: string[]): PolicyRule | undefined {
  if (!isObject(v)) {
    errs.push(`${field}: must be an object`);
    return undefined;
  }
  unknownFields(v, RULE_FIELDS, field, warnings);
  const level = v.level;
  if (typeof level !== 'string' || !(LEVELS as readonly string[]).includes(level)) {
    errs.push(
      level === undefined || level === ''
        ? `${field}.level: Required value`
        : `${field}.level: Unsupported value: ${JSON.stringify(level)}: supported values: ${LEVELS.join(', ')}`,
    );
  }
  const rule: PolicyRule = { level: level as Level };
  const users = strings(v.users, `${field}.users`, errs);
  const userGroups = strings(v.userGroups, `${field}.userGroups`, errs);
  const verbs = strings(v.verbs, `${field}.verbs`, errs);
  const namespaces = strings(v.namespaces, `${field}.namespaces`, errs);
  const urls = strings(v.nonResourceURLs, `${field}.nonResourceURLs`, errs);
  const omit = stages(v.omitStages, `${field}.omitStages`, errs);
  if (users) rule.users = users;
  if (userGroups) rule.userGroups = userGroups;
  if (verbs) rule.verbs = verbs;
  if (namespaces) rule.namespaces = namespaces;
  if (omit) rule.omitStages = omit;
  if (urls) {
    rule.nonResourceURLs = urls;
    urls.forEach((u, i) => {
      if (u === '*') return;
      if (!u.startsWith('/'))
        errs.push(
          `${field}.nonResourceURLs[${i}]: Invalid value: ${JSON.stringify(u)}: must begin with a '/' or be '*'`,
        );
      else if (u.slice(0, -1).includes('*'))
        errs.push(
          `${field}.nonResourceURLs[${i}]: Invalid value: ${JSON.stringify(u)}: a wildcard '*' must be the final character`,
        );
    });
  }
  if (v.resources !== undefined && v.resources !== null) {
    if (!Array.isArray(v.resources)) {
      errs.push(`${field}.resources: must be a list`);
    } else {
      rule.resources = [];
      v.resources.forEach((g: unknown, i) => {
        const gf = `${field}.resources[${i}]`;
        if (!isObject(g)) {
          errs.push(`${gf}: must be an object`);
          return;
        }
        unknownFields(g, GROUP_RESOURCE_FIELDS, gf, warnings);
        const gr: GroupResources = {};
        if (g.group !== undefined && g.group !== null) {
          if (typeof g.group !== 'string') errs.push(`${gf}.group: must be a string`);
          else if (g.group !== '' && !DNS_SUBDOMAIN.test(g.group))
            errs.push(`${gf}.group: Invalid value: ${JSON.stringify(g.group)}: must be a DNS subdomain`);
          else gr.group = g.group;
        }
        const resources = strings(g.resources, `${gf}.resources`, errs);
        const names = strings(g.resourceNames, `${gf}.resourceNames`, errs);
        if (resources) gr.resources = resources;
        if (names) gr.resourceNames = names;
        if ((names?.length ?? 0) > 0 && (resources?.length ?? 0) === 0)
          errs.push(`${gf}.resourceNames: Invalid value: using resourceNames requires at least one resource`);
        rule.resources!.push(gr);
      });
    }
  }
  if ((urls?.length ?? 0) > 0 && ((rule.resources?.length ?? 0) > 0 || (namespaces?.length ?? 0) > 0))
    errs.push(
      `${field}.nonResourceURLs: Invalid value: rules cannot apply to both regular resources and non-resource URLs`,
    );
  return rule;
}

/**
 * Reads a policy document (YAML or JSON text). Throws {@link PolicyError} listing every problem; `source` names the
 * file in the message. Unknown fields are returned as warnings.
 */
export function parsePolicy(text: string, source = 'audit policy'): { policy: Policy; warnings: string[] } {
  let doc: unknown;
  try {
    doc = yaml.load(text, { json: true });
  } catch (err) {
    throw new PolicyError(`${source}: not valid YAML or JSON: ${(err as Error).message.split('\n')[0] ?? ''}`);
  }
  if (!isObject(doc)) throw new PolicyError(`${source}: must hold a Policy object`);
  const errs: string[] = [];
  const warnings: string[] = [];
  if (doc.kind !== 'Policy') errs.push(`kind: must be Policy (got ${JSON.stringify(doc.kind ?? '')})`);
  if (typeof doc.apiVersion !== 'string' || !POLICY_VERSIONS.includes(doc.apiVersion))
    errs.push(
      `apiVersion: unsupported ${JSON.stringify(doc.apiVersion ?? '')}: supported versions: ${POLICY_VERSIONS.join(', ')}`,
    );
  unknownFields(doc, POLICY_FIELDS, '', warnings);
  const policy: Policy = { apiVersion: String(doc.apiVersion), kind: 'Policy', rules: [] };
  const omit = stages(doc.omitStages, 'omitStages', errs);
  if (omit) policy.omitStages = omit;
  if (doc.rules !== undefined && doc.rules !== null && !Array.isArray(doc.rules)) errs.push('rules: must be a list');
  else
    (doc.rules ?? []).forEach((r: unknown, i: number) => {
      const rule = parseRule(r, `rules[${i}]`, errs, warnings);
      if (rule) policy.rules.push(rule);
    });
  if (errs.length > 0) throw new PolicyError(`${source}: invalid audit policy: ${errs.join('; ')}`);
  return { policy, warnings: warnings.map((w) => `${source}: ${w}`) };
}

/** Reads and parses a policy file (`--audit-policy-file`). Throws {@link PolicyError} naming the file. */
export function loadPolicyFile(path: string): { policy: Policy; warnings: string[] } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new PolicyError(`--audit-policy-file: cannot read ${path}: ${(err as Error).message}`);
  }
  return parsePolicy(text, path);
}

/** A rule compiled for matching. */
interface CompiledRule {
  decision: PolicyDecision;
  users?: Set<string>;
  groups?: Set<string>;
  verbs?: Set<string>;
  namespaces?: Set<string>;
  resources?: GroupResources[];
  urls?: string[];
  resourceOnly: boolean;
}

function matchesResource(r: CompiledRule, a: Attributes): boolean {
  if (!a.resourceRequest) return false;
  if (r.namespaces && !r.namespaces.has(a.namespace)) return false;
  if (!r.resources || r.resources.length === 0) return true;
  const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  for (const gr of r.resources) {
    if ((gr.group ?? '') !== a.apiGroup) continue;
    if (!gr.resources || gr.resources.length === 0) return true;
    if (gr.resourceNames && gr.resourceNames.length > 0 && !gr.resourceNames.includes(a.name)) continue;
    for (const res of gr.resources) {
      if (res === combined || res === '*') return true;
      if (a.subresource && res.startsWith('*/') && res.slice(2) === a.subresource) return true;
      if (res.endsWith('/*') && res.slice(0, -2) === a.resource) return true;
    }
  }
  return false;
}

function matchesPath(path: string, spec: string): boolean {
  if (spec === '*' || spec === path) return true;
  return spec.endsWith('*') && path.startsWith(spec.slice(0, -1));
}

function matches(r: CompiledRule, a: Attributes): boolean {
  if (r.users && !r.users.has(a.user.name)) return false;
  if (r.groups && !a.user.groups.some((g) => r.groups!.has(g))) return false;
  if (r.verbs && !r.verbs.has(a.verb)) return false;
  if (r.resourceOnly) return matchesResource(r, a);
  if (r.urls) return !a.resourceRequest && r.urls.some((u) => matchesPath(a.path, u));
  return true;
}

const NONE: PolicyDecision = { level: 'None', omitStages: new Set() };

const nonEmpty = (l: string[] | undefined): Set<string> | undefined => (l && l.length > 0 ? new Set(l) : undefined);

/** The evaluator of a validated policy. */
export function policyEvaluator(policy: Policy): PolicyEvaluator {
  const rules: CompiledRule[] = policy.rules.map((rule) => {
    const users = nonEmpty(rule.users);
    const groups = nonEmpty(rule.userGroups);
    const verbs = nonEmpty(rule.verbs);
    const namespaces = nonEmpty(rule.namespaces);
    const resourceOnly = (rule.namespaces?.length ?? 0) > 0 || (rule.resources?.length ?? 0) > 0;
    return {
      decision: {
        level: rule.level,
        omitStages: new Set([...(policy.omitStages ?? []), ...(rule.omitStages ?? [])]),
      },
      ...(users ? { users } : {}),
      ...(groups ? { groups } : {}),
      ...(verbs ? { verbs } : {}),
      ...(namespaces ? { namespaces } : {}),
      ...(rule.resources && rule.resources.length > 0 ? { resources: rule.resources } : {}),
      ...(rule.nonResourceURLs && rule.nonResourceURLs.length > 0 ? { urls: rule.nonResourceURLs } : {}),
      resourceOnly,
    };
  });
  return {
    evaluate(a) {
      for (const r of rules) if (matches(r, a)) return r.decision;
      return NONE;
    },
  };
}
