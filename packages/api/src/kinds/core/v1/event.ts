/** core/v1 Event: a report of something that happened in the cluster. */
import { type Static } from '@sinclair/typebox';

import { object, opt, ref, req, t } from '../../../schema/schema';
import { defineKind, OBJECT_HEAD, schemaPrefix } from '../../../scheme/kind';
import { type TableColumn, age } from '../../../table/table';
import { EventSeriesSchema, EventSourceSchema, ObjectReferenceSchema } from './types';

const P = schemaPrefix('', 'v1');

/** Event, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const EventSchema = object(
  `${P}Event`,
  {
    ...OBJECT_HEAD,
    involvedObject: req(2, ref(ObjectReferenceSchema), 'The object that this event is about.'),
    reason: opt(3, t.string(), 'Short, machine understandable reason for the transition.'),
    message: opt(4, t.string(), 'Human-readable description of the status of this operation.'),
    source: opt(5, ref(EventSourceSchema), 'The component reporting this event.'),
    firstTimestamp: opt(6, t.time(), 'The time at which the event was first recorded.'),
    lastTimestamp: opt(7, t.time(), 'The time at which the most recent occurrence was recorded.'),
    count: opt(8, t.int32(), 'The number of times this event has occurred.'),
    type: opt(9, t.string(), 'Normal or Warning.'),
    eventTime: opt(10, t.microTime(), 'Time when this event was first observed.'),
    series: opt(11, ref(EventSeriesSchema), 'Data about the event series, or unset for a singleton.'),
    action: opt(12, t.string(), 'What action was taken/failed regarding the object.'),
    related: opt(13, ref(ObjectReferenceSchema), 'Optional secondary object.'),
    reportingComponent: opt(14, t.string(), 'Name of the controller that emitted this event.'),
    reportingInstance: opt(15, t.string(), 'ID of the controller instance.'),
  },
  { description: 'Event is a report of an event somewhere in the cluster.' },
);
/** A Event object in its JSON form. */
export type Event = Static<typeof EventSchema>;

/** The fields of an event the printer reads, common to core/v1 and events.platform/v1 events. */
export interface EventView {
  lastTimestamp?: string;
  firstTimestamp?: string;
  eventTime?: string;
  series?: { count?: number; lastObservedTime?: string };
  count?: number;
  type?: string;
  reason?: string;
  object: { kind?: string; name?: string; fieldPath?: string };
  source: string;
  message?: string;
}

/** The columns of `kubectl get events` after Name (`printEvent`), for any event shape through `view`. */
export function eventColumns<T>(view: (o: T) => EventView): TableColumn<T>[] {
  const times = (o: T, now: number): { first: string; last: string; count: number } => {
    const e = view(o);
    const first = e.firstTimestamp ? age(e.firstTimestamp, now) : age(e.eventTime, now);
    let last = e.lastTimestamp ? age(e.lastTimestamp, now) : first;
    let count = e.count ?? 0;
    if (e.series) {
      last = age(e.series.lastObservedTime, now);
      count = e.series.count ?? 0;
    } else if (count === 0) {
      count = 1; // singleton events of the new API have no count
    }
    return { first, last, count };
  };
  return [
    {
      name: 'Last Seen',
      type: 'string',
      description: 'Time since the most recent occurrence.',
      cell: (o, now) => times(o, now).last,
    },
    { name: 'Type', type: 'string', description: 'Normal or Warning.', cell: (o) => view(o).type ?? '' },
    { name: 'Reason', type: 'string', description: 'Reason of the event.', cell: (o) => view(o).reason ?? '' },
    {
      name: 'Object',
      type: 'string',
      description: 'The object this event is about.',
      cell: (o) => {
        const obj = view(o).object;
        const kind = (obj.kind ?? '').toLowerCase();
        return obj.name ? `${kind}/${obj.name}` : kind;
      },
    },
    {
      name: 'Subobject',
      type: 'string',
      priority: 1,
      description: 'The part of the object the event is about.',
      cell: (o) => view(o).object.fieldPath ?? '',
    },
    {
      name: 'Source',
      type: 'string',
      priority: 1,
      description: 'The component reporting the event.',
      cell: (o) => view(o).source,
    },
    {
      name: 'Message',
      type: 'string',
      description: 'Human-readable message.',
      cell: (o) => (view(o).message ?? '').trim(),
    },
    {
      name: 'First Seen',
      type: 'string',
      priority: 1,
      description: 'Time since the first occurrence.',
      cell: (o, now) => times(o, now).first,
    },
    {
      name: 'Count',
      type: 'string',
      priority: 1,
      description: 'Number of occurrences.',
      cell: (o, now) => times(o, now).count,
    },
  ];
}

function sourceOf(component: string | undefined, instance: string | undefined): string {
  return instance ? `${component ?? ''}, ${instance}` : (component ?? '');
}

/** The Event kind: discovery facts, defaults, printer columns and field selectors. */
export const EventKind = defineKind({
  group: '',
  version: 'v1',
  kind: 'Event',
  plural: 'events',
  shortNames: ['ev'],
  scope: 'Namespaced',
  schema: EventSchema,
  columns: eventColumns((e: Event) => ({
    ...e,
    object: e.involvedObject ?? {},
    source: sourceOf(e.source?.component || e.reportingComponent, e.source?.host || e.reportingInstance),
  })),
  fields: {
    'involvedObject.kind': (o) => o.involvedObject?.kind ?? '',
    'involvedObject.namespace': (o) => o.involvedObject?.namespace ?? '',
    'involvedObject.name': (o) => o.involvedObject?.name ?? '',
    'involvedObject.uid': (o) => o.involvedObject?.uid ?? '',
    'involvedObject.apiVersion': (o) => o.involvedObject?.apiVersion ?? '',
    'involvedObject.resourceVersion': (o) => o.involvedObject?.resourceVersion ?? '',
    'involvedObject.fieldPath': (o) => o.involvedObject?.fieldPath ?? '',
    reason: (o) => o.reason ?? '',
    reportingComponent: (o) => o.reportingComponent ?? '',
    source: (o) => o.source?.component ?? '',
    type: (o) => o.type ?? '',
  },
});
