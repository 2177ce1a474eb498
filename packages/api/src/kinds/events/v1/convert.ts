/**
 * Conversion between core/v1 Event and events.platform/v1 Event (model: Kubernetes 1.21
 * `pkg/apis/events/v1/conversion.go`). Both are stored as core/v1 Events under one key prefix, so an event written
 * in either version is read in both: `regarding` is `involvedObject`, `note` is `message`, `reportingController` is
 * `reportingComponent`, and the `deprecated*` fields are the core fields of the same name.
 */
import { type Event } from '../../core/v1/event';
import { type EventsV1Event } from './event';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

function put<T extends object, K extends keyof T>(o: T, k: K, v: T[K] | undefined): void {
  if (v !== undefined) (o as Mutable<T>)[k] = v;
}

/** core/v1 → events.platform/v1. */
export function eventToEventsV1(e: Event): EventsV1Event {
  const out: EventsV1Event = { apiVersion: 'events.platform/v1', kind: 'Event', metadata: e.metadata ?? {} };
  put(out, 'eventTime', e.eventTime);
  if (e.series) {
    out.series = { count: e.series.count ?? 0, lastObservedTime: e.series.lastObservedTime ?? '' };
  }
  put(out, 'reportingController', e.reportingComponent);
  put(out, 'reportingInstance', e.reportingInstance);
  put(out, 'action', e.action);
  put(out, 'reason', e.reason);
  if (e.involvedObject && Object.keys(e.involvedObject).length > 0) out.regarding = e.involvedObject;
  put(out, 'related', e.related);
  put(out, 'note', e.message);
  put(out, 'type', e.type);
  if (e.source && Object.keys(e.source).length > 0) out.deprecatedSource = e.source;
  put(out, 'deprecatedFirstTimestamp', e.firstTimestamp);
  put(out, 'deprecatedLastTimestamp', e.lastTimestamp);
  if (e.count) out.deprecatedCount = e.count;
  return out;
}

/** events.platform/v1 → core/v1. */
export function eventsV1ToEvent(e: EventsV1Event): Event {
  const out: Event = {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: e.metadata ?? {},
    involvedObject: e.regarding ?? {},
  };
  put(out, 'reason', e.reason);
  put(out, 'message', e.note);
  put(out, 'source', e.deprecatedSource);
  put(out, 'firstTimestamp', e.deprecatedFirstTimestamp);
  put(out, 'lastTimestamp', e.deprecatedLastTimestamp);
  if (e.deprecatedCount) out.count = e.deprecatedCount;
  put(out, 'type', e.type);
  put(out, 'eventTime', e.eventTime);
  put(out, 'series', e.series);
  put(out, 'action', e.action);
  put(out, 'related', e.related);
  put(out, 'reportingComponent', e.reportingController);
  put(out, 'reportingInstance', e.reportingInstance);
  return out;
}
