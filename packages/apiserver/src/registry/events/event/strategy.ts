/**
 * The events.platform/v1 Event strategy (model: Kubernetes 1.21 `ValidateEventCreate` / `ValidateEventUpdate` for
 * requests in events.k8s.io/v1). Events written in this version are "new" events: they need `eventTime`, a
 * reporting controller and instance, an action and a reason, must leave the deprecated core fields unset, and
 * after creation only their series may change. Field paths use this version's names.
 */
import {
  type EventsV1Event,
  type FieldError,
  FieldPath,
  field,
  isDNS1123Subdomain,
  isQualifiedName,
  type Kind,
  validateImmutableField,
} from '@platform/api';

import { defaultStrategy } from '../../generic/default-strategy';
import { type CreateStrategy, type UpdateStrategy } from '../../rest/rest';

const REPORTING_INSTANCE_MAX = 128;
const ACTION_MAX = 128;
const REASON_MAX = 128;
const NOTE_MAX = 1024;

const path = (p: string): FieldPath => new FieldPath(p);

function validateSeries(e: EventsV1Event): FieldError[] {
  if (!e.series) return [];
  const errs: FieldError[] = [];
  if ((e.series.count ?? 0) < 2) errs.push(field.invalid(path('series.count'), '', 'should be at least 2'));
  if (!e.series.lastObservedTime) errs.push(field.required(path('series.lastObservedTime')));
  return errs;
}

function limit(errs: FieldError[], name: string, value: string | undefined, max: number): void {
  if (!value) errs.push(field.required(path(name)));
  else if (value.length > max) errs.push(field.invalid(path(name), '', `can have at most ${max} characters`));
}

/** Validation of an event created through events.platform/v1. */
export function validateEventsV1(e: EventsV1Event): FieldError[] {
  const errs: FieldError[] = [];
  const ns = e.metadata?.namespace ?? '';
  const regardingNs = e.regarding?.namespace ?? '';
  if (regardingNs ? regardingNs !== ns : ns !== 'default' && ns !== 'system') {
    errs.push(field.invalid(path('regarding.namespace'), regardingNs, 'does not match event.namespace'));
  }
  if (!e.reportingController) errs.push(field.required(path('reportingController')));
  else
    errs.push(
      ...field.invalidEach(path('reportingController'), e.reportingController, isQualifiedName(e.reportingController)),
    );
  limit(errs, 'reportingInstance', e.reportingInstance, REPORTING_INSTANCE_MAX);
  limit(errs, 'action', e.action, ACTION_MAX);
  limit(errs, 'reason', e.reason, REASON_MAX);
  if ((e.note ?? '').length > NOTE_MAX) {
    errs.push(field.invalid(path('note'), '', `can have at most ${NOTE_MAX} characters`));
  }
  if (ns) errs.push(...field.invalidEach(path('metadata.namespace'), ns, isDNS1123Subdomain(ns)));
  errs.push(...validateSeries(e));
  if (!e.eventTime) errs.push(field.required(path('eventTime')));
  if (e.type !== 'Normal' && e.type !== 'Warning') {
    errs.push(field.invalid(path('type'), '', `has invalid value: ${e.type ?? ''}`));
  }
  if (e.deprecatedFirstTimestamp) errs.push(field.invalid(path('deprecatedFirstTimestamp'), '', 'needs to be unset'));
  if (e.deprecatedLastTimestamp) errs.push(field.invalid(path('deprecatedLastTimestamp'), '', 'needs to be unset'));
  if (e.deprecatedCount) errs.push(field.invalid(path('deprecatedCount'), '', 'needs to be unset'));
  if (e.deprecatedSource?.component || e.deprecatedSource?.host) {
    errs.push(field.invalid(path('deprecatedSource'), '', 'needs to be unset'));
  }
  return errs;
}

/** The fields an update through events.platform/v1 may not change (all but the series and metadata). */
const IMMUTABLE: (keyof EventsV1Event)[] = [
  'regarding',
  'reason',
  'note',
  'deprecatedSource',
  'deprecatedFirstTimestamp',
  'deprecatedLastTimestamp',
  'deprecatedCount',
  'type',
  'eventTime',
  'action',
  'related',
  'reportingController',
  'reportingInstance',
];

/** Validation of an update through events.platform/v1. */
export function validateEventsV1Update(e: EventsV1Event, old: EventsV1Event): FieldError[] {
  const errs = validateSeries(e);
  for (const name of IMMUTABLE) errs.push(...validateImmutableField(e[name], old[name], path(name)));
  return errs;
}

/** The strategy of events.platform/v1 `events`. */
export function eventsV1Strategy(kind: Kind): CreateStrategy & UpdateStrategy {
  return defaultStrategy(kind, {
    validate: (_ctx, obj) => validateEventsV1(obj as EventsV1Event),
    validateUpdate: (_ctx, obj, old) => validateEventsV1Update(obj as EventsV1Event, old as EventsV1Event),
  });
}
