/**
 * Node selectors of pod affinity (`spec.affinity.nodeAffinity`, `NodeSelector` with its ORed
 * `nodeSelectorTerms`), as Kubernetes 1.21 evaluates them (`pkg/apis/core/v1/helper`,
 * `component-helpers/scheduling/corev1/nodeaffinity`): `matchExpressions` on node labels with
 * `In`, `NotIn`, `Exists`, `DoesNotExist`, `Gt`, `Lt`; `matchFields` on `metadata.name` with `In`
 * or `NotIn` and exactly one value. Terms are compiled once; a term that is invalid or empty matches
 * no node, so one bad term does not stop the others from matching.
 */
import {
  andFieldSelectors,
  nothingFields,
  oneTermEqualSelector,
  oneTermNotEqualSelector,
  type FieldSelector,
} from '../fields/selector';
import { goQuote } from '../validation/go-format';
import {
  LabelSelectorParseError,
  newRequirement,
  nothing,
  selectorFromRequirements,
  type Labels,
  type Operator,
  type Selector,
} from './selector';

/** The operator of a node selector requirement. */
export type NodeSelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt';

/** One requirement on a node label (or field): `key operator values`. */
export interface NodeSelectorRequirementLike {
  key: string;
  operator: NodeSelectorOperator;
  values?: string[];
}

/** One term: its label and field requirements are ANDed. */
export interface NodeSelectorTermLike {
  matchExpressions?: NodeSelectorRequirementLike[];
  matchFields?: NodeSelectorRequirementLike[];
}

/** A node selector: its terms are ORed. */
export interface NodeSelectorLike {
  nodeSelectorTerms: NodeSelectorTermLike[];
}

/** What a node selector reads from a node. */
export interface NodeLike {
  metadata?: { name?: string; labels?: Readonly<Record<string, string>> };
}

const NODE_OPERATORS: Readonly<Record<NodeSelectorOperator, Operator>> = {
  In: 'in',
  NotIn: 'notin',
  Exists: 'exists',
  DoesNotExist: '!',
  Gt: 'gt',
  Lt: 'lt',
};

/** The only field a node selector term may match on. */
export const NODE_FIELD_NAME = 'metadata.name';

/**
 * Converts label requirements to a `Selector` (`NodeSelectorRequirementsAsSelector`); no
 * requirements give `nothing()`. Throws `LabelSelectorParseError` for an unknown operator
 * (`"Foo" is not a valid node selector operator`) or an invalid requirement.
 */
export function nodeSelectorRequirementsAsSelector(reqs: readonly NodeSelectorRequirementLike[] | undefined): Selector {
  if (!reqs || reqs.length === 0) return nothing();
  return selectorFromRequirements(
    reqs.map((expr) => {
      const op = Object.prototype.hasOwnProperty.call(NODE_OPERATORS, expr.operator)
        ? NODE_OPERATORS[expr.operator]
        : undefined;
      if (op === undefined) {
        throw new LabelSelectorParseError(`${goQuote(String(expr.operator))} is not a valid node selector operator`);
      }
      return newRequirement(expr.key, op, expr.values ?? []);
    }),
  );
}

/**
 * Converts field requirements to a `FieldSelector` (`NodeSelectorRequirementsAsFieldSelector`): `In`
 * and `NotIn` with exactly one value on `metadata.name`; no requirements give `nothingFields()`.
 * Throws `LabelSelectorParseError` for anything else.
 */
export function nodeSelectorRequirementsAsFieldSelector(
  reqs: readonly NodeSelectorRequirementLike[] | undefined,
): FieldSelector {
  if (!reqs || reqs.length === 0) return nothingFields();
  const selectors = reqs.map((expr) => {
    if (expr.key !== NODE_FIELD_NAME) {
      throw new LabelSelectorParseError(`${goQuote(String(expr.key))} is not a valid field selector key`);
    }
    const values = expr.values ?? [];
    if (expr.operator !== 'In' && expr.operator !== 'NotIn') {
      throw new LabelSelectorParseError(
        `${goQuote(String(expr.operator))} is not a valid node field selector operator`,
      );
    }
    if (values.length !== 1) {
      throw new LabelSelectorParseError(
        `unexpected number of value (${values.length}) for node field selector operator ${goQuote(expr.operator)}`,
      );
    }
    const v = values[0] as string;
    return expr.operator === 'In' ? oneTermEqualSelector(expr.key, v) : oneTermNotEqualSelector(expr.key, v);
  });
  return andFieldSelectors(...selectors);
}

interface CompiledTerm {
  labels?: Selector;
  fields?: FieldSelector;
}

/**
 * A compiled node selector: parse once, then `matches(node)` for every node. Invalid or empty
 * terms never match; `errors` lists why each invalid term was dropped (with its index).
 */
export class NodeSelectorMatcher {
  private readonly terms: readonly CompiledTerm[];
  /** Problems found while compiling, as `nodeSelectorTerms[i]: message`. */
  readonly errors: readonly string[];

  constructor(selector: NodeSelectorLike | null | undefined) {
    const terms: CompiledTerm[] = [];
    const errors: string[] = [];
    (selector?.nodeSelectorTerms ?? []).forEach((term, i) => {
      const exprs = term?.matchExpressions ?? [];
      const fields = term?.matchFields ?? [];
      if (exprs.length === 0 && fields.length === 0) return; // an empty term selects nothing
      try {
        terms.push({
          labels: exprs.length > 0 ? nodeSelectorRequirementsAsSelector(exprs) : undefined,
          fields: fields.length > 0 ? nodeSelectorRequirementsAsFieldSelector(fields) : undefined,
        });
      } catch (err) {
        errors.push(`nodeSelectorTerms[${i}]: ${(err as Error).message}`);
      }
    });
    this.terms = terms;
    this.errors = errors;
  }

  /** True when some term matches the node's labels and name. */
  matches(node: NodeLike | undefined): boolean {
    return this.matchesLabelsAndFields(node?.metadata?.labels, { [NODE_FIELD_NAME]: node?.metadata?.name ?? '' });
  }

  /** True when some term matches the given node labels and node fields. */
  matchesLabelsAndFields(nodeLabels: Labels | undefined, nodeFields: Readonly<Record<string, string>>): boolean {
    for (const t of this.terms) {
      if (t.labels && !t.labels.matches(nodeLabels)) continue;
      if (t.fields && !t.fields.matches(nodeFields)) continue;
      return true;
    }
    return false;
  }
}

/**
 * Whether a node matches a node selector's terms (ORed; empty or invalid terms match nothing). For
 * many nodes, build one `NodeSelectorMatcher` instead.
 */
export function matchNodeSelector(selector: NodeSelectorLike | null | undefined, node: NodeLike | undefined): boolean {
  return new NodeSelectorMatcher(selector).matches(node);
}

/**
 * Whether a node's labels satisfy a pod's `spec.nodeSelector` map (every pair present). An empty
 * or absent map matches every node.
 */
export function matchesNodeSelectorMap(
  nodeSelector: Readonly<Record<string, string>> | undefined,
  nodeLabels: Labels | undefined,
): boolean {
  if (!nodeSelector) return true;
  for (const k of Object.keys(nodeSelector)) {
    if (!nodeLabels || !Object.prototype.hasOwnProperty.call(nodeLabels, k) || nodeLabels[k] !== nodeSelector[k]) {
      return false;
    }
  }
  return true;
}
