/**
 * The two shapes of an autoscaler's metrics, and the one conversion between them (model: Kubernetes 1.21
 * `pkg/apis/autoscaling/v2beta1/conversion.go` and `v1/conversion.go`, which convert through the internal type):
 *
 * - v2beta2's: a source names its metric (`metric: {name, selector}`) and holds a `target` (`MetricTarget`: `type`,
 *   `value`, `averageValue`, `averageUtilization`) or, in a status, a `current` value;
 * - v2beta1's, which autoscaling/v1 also writes in its `autoscaling.alpha.kubernetes.io/metrics` and
 *   `current-metrics` annotations: flat fields (`metricName`, `targetAverageUtilization`, `currentValue` ...).
 *
 * Specs and statuses differ only in the names of their value fields (`target…` / `current…`), so one table of those
 * names per source serves both, in both directions. Every value is carried over, so the two directions are inverse
 * (a v2beta1 object target keeps its `targetValue` beside an `averageValue`, as 1.21 does). Nothing here fails: a
 * source that is not an object is left out.
 */

type Json = Record<string, unknown>;

/** The metric sources, by their field in a MetricSpec or MetricStatus. */
const SOURCES = ['object', 'pods', 'resource', 'containerResource', 'external'] as const;
type Source = (typeof SOURCES)[number];

/** A spec metric (its `target`) or a status metric (its `current` value). */
type Side = 'spec' | 'status';

/** v2beta2's value fields. */
type ValueField = 'value' | 'averageValue' | 'averageUtilization';

/** Where each v2beta2 value field of a source is written in the v2beta1 shape, for a spec and for a status. */
const RESOURCE_VALUE_FIELDS: Record<Side, Partial<Record<ValueField, string>>> = {
  spec: { averageUtilization: 'targetAverageUtilization', averageValue: 'targetAverageValue' },
  status: { averageUtilization: 'currentAverageUtilization', averageValue: 'currentAverageValue' },
};
const VALUE_FIELDS: Record<Source, Record<Side, Partial<Record<ValueField, string>>>> = {
  resource: RESOURCE_VALUE_FIELDS,
  containerResource: RESOURCE_VALUE_FIELDS,
  pods: { spec: { averageValue: 'targetAverageValue' }, status: { averageValue: 'currentAverageValue' } },
  object: {
    spec: { value: 'targetValue', averageValue: 'averageValue' },
    status: { value: 'currentValue', averageValue: 'averageValue' },
  },
  external: {
    spec: { value: 'targetValue', averageValue: 'targetAverageValue' },
    status: { value: 'currentValue', averageValue: 'currentAverageValue' },
  },
};

/** The `type` of a v2beta2 target read from the v2beta1 shape, as 1.21's conversions choose it. */
const resourceTargetType = (t: Json): string => (t.averageUtilization !== undefined ? 'Utilization' : 'AverageValue');
const TARGET_TYPE: Record<Source, (target: Json) => string> = {
  resource: resourceTargetType,
  containerResource: resourceTargetType,
  pods: () => 'AverageValue',
  object: (t) => (t.averageValue !== undefined ? 'AverageValue' : 'Value'),
  external: (t) => (t.value !== undefined ? 'Value' : 'AverageValue'),
};

/** Drops undefined and null values (JSON would omit them; tests compare objects). */
export function clean<T extends Json>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null)) as T;
}

function asJson(v: unknown): Json {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {};
}

function identifier(name: unknown, selector: unknown): Json {
  return clean({ name: name ?? '', selector });
}

/** What names a source's metric (everything but its values), v2beta2 → v2beta1 and back. */
const IDENTITY: Record<Source, { toBeta1(s: Json): Json; fromBeta1(o: Json): Json }> = {
  resource: { toBeta1: (s) => ({ name: s.name }), fromBeta1: (o) => ({ name: o.name }) },
  containerResource: {
    toBeta1: (s) => ({ name: s.name, container: s.container }),
    fromBeta1: (o) => ({ name: o.name, container: o.container }),
  },
  pods: {
    toBeta1: (s) => ({ metricName: asJson(s.metric).name, selector: asJson(s.metric).selector }),
    fromBeta1: (o) => ({ metric: identifier(o.metricName, o.selector) }),
  },
  object: {
    toBeta1: (s) => ({
      target: s.describedObject,
      metricName: asJson(s.metric).name,
      selector: asJson(s.metric).selector,
    }),
    fromBeta1: (o) => ({ describedObject: o.target, metric: identifier(o.metricName, o.selector) }),
  },
  external: {
    toBeta1: (s) => ({ metricName: asJson(s.metric).name, metricSelector: asJson(s.metric).selector }),
    fromBeta1: (o) => ({ metric: identifier(o.metricName, o.metricSelector) }),
  },
};

function toBeta1(m: Json, side: Side): Json {
  const out: Json = { type: m.type };
  for (const source of SOURCES) {
    if (!m[source] || typeof m[source] !== 'object') continue;
    const s = m[source] as Json;
    const values = asJson(side === 'spec' ? s.target : s.current);
    const o: Json = IDENTITY[source].toBeta1(s);
    for (const [field, name] of Object.entries(VALUE_FIELDS[source][side])) o[name] = values[field];
    out[source] = clean(o);
  }
  return out;
}

function fromBeta1(m: Json, side: Side): Json {
  const out: Json = { type: m.type };
  for (const source of SOURCES) {
    if (!m[source] || typeof m[source] !== 'object') continue;
    const o = m[source] as Json;
    const values: Json = {};
    for (const [field, name] of Object.entries(VALUE_FIELDS[source][side])) values[field] = o[name];
    const v = clean(values);
    out[source] = {
      ...IDENTITY[source].fromBeta1(o),
      ...(side === 'spec' ? { target: { type: TARGET_TYPE[source](v), ...v } } : { current: v }),
    };
  }
  return out;
}

/** A v2beta2 MetricSpec in the v2beta1 (and v1 annotation) shape. */
export function metricToV2beta1(m: object): Json {
  return toBeta1(m as Json, 'spec');
}

/** A v2beta1 (or v1 annotation) MetricSpec in the v2beta2 shape. */
export function metricFromV2beta1(m: object): Json {
  return fromBeta1(m as Json, 'spec');
}

/** A v2beta2 MetricStatus in the v2beta1 (and v1 annotation) shape. */
export function metricStatusToV2beta1(m: object): Json {
  return toBeta1(m as Json, 'status');
}

/** A v2beta1 (or v1 annotation) MetricStatus in the v2beta2 shape. */
export function metricStatusFromV2beta1(m: object): Json {
  return fromBeta1(m as Json, 'status');
}
