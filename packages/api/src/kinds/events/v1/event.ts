/** events.platform/v1 Event: the newer shape of core/v1 Event (same storage in Kubernetes). */
import { type Static } from '@sinclair/typebox';

import { object, opt, ref, req, t } from '../../../schema/schema';
import { defineKind, OBJECT_HEAD, schemaPrefix } from '../../../scheme/kind';
import { eventColumns } from '../../core/v1/event';
import { EventSourceSchema, ObjectReferenceSchema } from '../../core/v1/types';

const P = schemaPrefix('events.platform', 'v1');

/** EventSeries, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const EventSeriesSchema = object(`${P}EventSeries`, {
  count: req(1, t.int32(), 'Occurrences in this series up to the last heartbeat.'),
  lastObservedTime: req(2, t.microTime(), 'Time of the last occurrence observed.'),
});

/** Event, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const EventSchema = object(
  `${P}Event`,
  {
    ...OBJECT_HEAD,
    // Required by validation for new events; events written through core/v1 may lack it, so not structurally.
    eventTime: opt(2, t.microTime(), 'Time when this event was first observed.'),
    series: opt(3, ref(EventSeriesSchema), 'Data about the event series, or unset for a singleton.'),
    reportingController: opt(4, t.string(), 'Name of the controller that emitted this event.'),
    reportingInstance: opt(5, t.string(), 'ID of the controller instance.'),
    action: opt(6, t.string(), 'What action was taken/failed regarding the regarding object.'),
    reason: opt(7, t.string(), 'Why the action was taken.'),
    regarding: opt(8, ref(ObjectReferenceSchema), 'The object this event is about.'),
    related: opt(9, ref(ObjectReferenceSchema), 'Optional secondary object.'),
    note: opt(10, t.string(), 'Human-readable description of the status of this operation.'),
    type: opt(11, t.string(), 'Normal or Warning.'),
    deprecatedSource: opt(12, ref(EventSourceSchema), 'Deprecated source (core/v1 compatibility).'),
    deprecatedFirstTimestamp: opt(13, t.time()),
    deprecatedLastTimestamp: opt(14, t.time()),
    deprecatedCount: opt(15, t.int32()),
  },
  {
    description:
      'Event is a report of an event somewhere in the cluster. It generally denotes some state change in the system.',
  },
);
/** A EventsV1Event object in its JSON form. */
export type EventsV1Event = Static<typeof EventSchema>;

/** The EventsV1Event kind: discovery facts, defaults, printer columns and field selectors. */
export const EventsV1EventKind = defineKind({
  group: 'events.platform',
  version: 'v1',
  kind: 'Event',
  plural: 'events',
  shortNames: ['ev'],
  scope: 'Namespaced',
  schema: EventSchema,
  columns: eventColumns((e: EventsV1Event) => ({
    lastTimestamp: e.deprecatedLastTimestamp,
    firstTimestamp: e.deprecatedFirstTimestamp,
    eventTime: e.eventTime,
    series: e.series,
    count: e.deprecatedCount,
    type: e.type,
    reason: e.reason,
    object: e.regarding ?? {},
    source: (() => {
      const component = e.deprecatedSource?.component || e.reportingController;
      const instance = e.deprecatedSource?.host || e.reportingInstance;
      return instance ? `${component ?? ''}, ${instance}` : (component ?? '');
    })(),
    message: e.note,
  })),
  // The field labels of events.k8s.io/v1 (AddFieldLabelConversionsForEvent): `regarding.*` for the core
  // `involvedObject.*`, `reportingController` for `reportingComponent`.
  fields: {
    'regarding.kind': (o) => o.regarding?.kind ?? '',
    'regarding.namespace': (o) => o.regarding?.namespace ?? '',
    'regarding.name': (o) => o.regarding?.name ?? '',
    'regarding.uid': (o) => o.regarding?.uid ?? '',
    'regarding.apiVersion': (o) => o.regarding?.apiVersion ?? '',
    'regarding.resourceVersion': (o) => o.regarding?.resourceVersion ?? '',
    'regarding.fieldPath': (o) => o.regarding?.fieldPath ?? '',
    reason: (o) => o.reason ?? '',
    reportingController: (o) => o.reportingController ?? '',
    type: (o) => o.type ?? '',
  },
});
