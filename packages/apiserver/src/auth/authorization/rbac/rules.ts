/**
 * RBAC rule matching and coverage (model: Kubernetes 1.21 `plugin/pkg/auth/authorizer/rbac/rbac.go` `RuleAllows`,
 * `pkg/apis/rbac/v1/evaluation_helpers.go`, and `pkg/registry/rbac/validation/policy_comparator.go` `Covers`).
 *
 * - `*` in verbs, apiGroups or resources matches everything; `*` in resources also matches every subresource.
 * - A subresource is asked for as `<resource>/<subresource>` (`pods/log`); a rule may name it so, or `*\/scale`.
 * - resourceNames, when given, limit the rule to those names (a request without a name never matches them).
 * - nonResourceURLs match exactly, or by prefix when the rule's URL ends in `*`.
 */
import { type Attributes, type PolicyRuleLike } from '../../authorizer';

/** The wildcard of verbs, groups, resources and non-resource URLs. */
export const ALL = '*';

function has(list: readonly string[] | undefined, v: string): boolean {
  return list !== undefined && list.includes(v);
}

/** Whether the rule allows `verb`. */
export function verbMatches(rule: PolicyRuleLike, verb: string): boolean {
  const verbs = rule.verbs;
  if (!verbs) return false;
  for (const v of verbs) if (v === ALL || v === verb) return true;
  return false;
}

/** Whether the rule names `group`. */
export function apiGroupMatches(rule: PolicyRuleLike, group: string): boolean {
  const groups = rule.apiGroups;
  if (!groups) return false;
  for (const g of groups) if (g === ALL || g === group) return true;
  return false;
}

/** Whether the rule names `combined` (`pods` or `pods/log`), `*`, or `*\/<subresource>`. */
export function resourceMatches(rule: PolicyRuleLike, combined: string, subresource: string): boolean {
  const resources = rule.resources;
  if (!resources) return false;
  for (const r of resources) {
    if (r === ALL || r === combined) return true;
    if (subresource && r.length === subresource.length + 2 && r.startsWith('*/') && r.endsWith(subresource))
      return true;
  }
  return false;
}

/** Whether the rule's resourceNames (if any) include `name`. */
export function resourceNameMatches(rule: PolicyRuleLike, name: string): boolean {
  const names = rule.resourceNames;
  if (!names || names.length === 0) return true;
  return names.includes(name);
}

/** Whether one non-resource URL pattern covers `path` (exact, `*`, or a prefix ending in `*`). */
export function urlPatternMatches(pattern: string, path: string): boolean {
  if (pattern === ALL || pattern === path) return true;
  return pattern.endsWith('*') && path.startsWith(pattern.replace(/\*+$/, ''));
}

/** Whether the rule names the non-resource `path`. */
export function nonResourceURLMatches(rule: PolicyRuleLike, path: string): boolean {
  const urls = rule.nonResourceURLs;
  if (!urls) return false;
  for (const u of urls) if (urlPatternMatches(u, path)) return true;
  return false;
}

/** Whether `rule` allows the request `a`. */
export function ruleAllows(a: Attributes, rule: PolicyRuleLike): boolean {
  if (a.resourceRequest) {
    const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
    return (
      verbMatches(rule, a.verb) &&
      apiGroupMatches(rule, a.apiGroup) &&
      resourceMatches(rule, combined, a.subresource) &&
      resourceNameMatches(rule, a.name)
    );
  }
  return verbMatches(rule, a.verb) && nonResourceURLMatches(rule, a.path);
}

/** Whether any of `rules` allows `a`. */
export function rulesAllow(a: Attributes, rules: readonly PolicyRuleLike[]): boolean {
  for (const r of rules) if (ruleAllows(a, r)) return true;
  return false;
}

// ---- coverage (escalation prevention) -----------------------------------------------------------------------

/** One rule per verb × group × resource × name, or per verb × URL (model: `BreakdownRule`). */
export function breakdownRule(rule: PolicyRuleLike): PolicyRuleLike[] {
  const out: PolicyRuleLike[] = [];
  const verbs = rule.verbs ?? [];
  for (const group of rule.apiGroups ?? []) {
    for (const resource of rule.resources ?? []) {
      for (const verb of verbs) {
        const names = rule.resourceNames ?? [];
        if (names.length > 0) {
          for (const name of names)
            out.push({ verbs: [verb], apiGroups: [group], resources: [resource], resourceNames: [name] });
        } else {
          out.push({ verbs: [verb], apiGroups: [group], resources: [resource] });
        }
      }
    }
  }
  for (const url of rule.nonResourceURLs ?? [])
    for (const verb of verbs) out.push({ verbs: [verb], nonResourceURLs: [url] });
  return out;
}

function hasAll(set: readonly string[] | undefined, wanted: readonly string[] | undefined): boolean {
  for (const w of wanted ?? []) if (!has(set, w)) return false;
  return true;
}

function resourceCoversAll(set: readonly string[] | undefined, wanted: readonly string[] | undefined): boolean {
  if (has(set, ALL) || hasAll(set, wanted)) return true;
  for (const path of wanted ?? []) {
    if (has(set, path)) continue;
    const slash = path.indexOf('/');
    if (slash < 0) return false;
    if (!has(set, `*/${path.slice(slash + 1)}`)) return false;
  }
  return true;
}

function nonResourceURLsCoverAll(set: readonly string[] | undefined, wanted: readonly string[] | undefined): boolean {
  for (const path of wanted ?? []) {
    if (
      !(set ?? []).some(
        (owner) => owner === path || (owner.endsWith('*') && path.startsWith(owner.replace(/\*+$/, ''))),
      )
    )
      return false;
  }
  return true;
}

/** Whether `owner` grants everything `sub` grants (model: `ruleCovers`). */
export function ruleCovers(owner: PolicyRuleLike, sub: PolicyRuleLike): boolean {
  const verbs = has(owner.verbs, ALL) || hasAll(owner.verbs, sub.verbs);
  const groups = has(owner.apiGroups, ALL) || hasAll(owner.apiGroups, sub.apiGroups);
  const resources = resourceCoversAll(owner.resources, sub.resources);
  const urls = nonResourceURLsCoverAll(owner.nonResourceURLs, sub.nonResourceURLs);
  const ownerNames = owner.resourceNames ?? [];
  const subNames = sub.resourceNames ?? [];
  // A rule for every name is covered only by a rule for every name.
  const names = ownerNames.length === 0 || (subNames.length > 0 && hasAll(ownerNames, subNames));
  return verbs && groups && resources && names && urls;
}

/**
 * Whether `owner` rules cover every one of `wanted`; the second value lists the (broken-down) rules not covered.
 */
export function covers(
  owner: readonly PolicyRuleLike[],
  wanted: readonly PolicyRuleLike[],
): { covered: boolean; missing: PolicyRuleLike[] } {
  const missing: PolicyRuleLike[] = [];
  for (const rule of wanted) {
    for (const piece of breakdownRule(rule)) {
      if (!owner.some((o) => ruleCovers(o, piece))) missing.push(piece);
    }
  }
  return { covered: missing.length === 0, missing };
}

/**
 * Merges the verbs of simple rules (one group, one resource, no names) on the same resource, keeping the others as
 * they are (model: `CompactRules`).
 */
export function compactRules(rules: readonly PolicyRuleLike[]): PolicyRuleLike[] {
  const out: PolicyRuleLike[] = [];
  const simple = new Map<string, PolicyRuleLike>();
  for (const r of rules) {
    const isSimple =
      (r.apiGroups ?? []).length === 1 &&
      (r.resources ?? []).length === 1 &&
      (r.resourceNames ?? []).length === 0 &&
      (r.nonResourceURLs ?? []).length === 0;
    if (!isSimple) {
      out.push(r);
      continue;
    }
    const key = `${r.apiGroups![0]}\0${r.resources![0]}`;
    const existing = simple.get(key);
    if (existing) {
      existing.verbs = [...(existing.verbs ?? []), ...(r.verbs ?? []).filter((v) => !existing.verbs?.includes(v))];
    } else {
      const copy = { apiGroups: [...r.apiGroups!], resources: [...r.resources!], verbs: [...(r.verbs ?? [])] };
      simple.set(key, copy);
      out.push(copy);
    }
  }
  return out;
}

/** A rule as Kubernetes prints it in an escalation error: `{APIGroups:["apps"], Resources:["deployments"], Verbs:["get" "list"]}`. */
export function compactString(rule: PolicyRuleLike): string {
  const parts: string[] = [];
  const add = (name: string, v: string[] | undefined): void => {
    if (v && v.length > 0) parts.push(`${name}:[${v.map((x) => JSON.stringify(x)).join(' ')}]`);
  };
  add('APIGroups', rule.apiGroups);
  add('Resources', rule.resources);
  add('NonResourceURLs', rule.nonResourceURLs);
  add('ResourceNames', rule.resourceNames);
  add('Verbs', rule.verbs);
  return `{${parts.join(', ')}}`;
}
