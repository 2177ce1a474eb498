/**
 * The core/v1 Event strategy (model: Kubernetes 1.21 `pkg/registry/core/event/strategy.go`, `ValidateEventCreate`):
 * the involved object is named, its namespace matches the event's, and the reporting fields are well formed.
 * Expiry (`--event-ttl`) is the store's.
 */
import { type Event, type FieldError, FieldPath, field, isDNS1123Subdomain, type Kind } from '@platform/api';

import { defaultStrategy } from '../../generic/default-strategy';
import { type CreateStrategy, type UpdateStrategy } from '../../rest/rest';

const REPORTING_INSTANCE_MAX = 128;
const ACTION_MAX = 128;
const REASON_MAX = 128;
const NOTE_MAX = 1024;

/** Validation of a core/v1 Event. */
export function validateEvent(e: Event): FieldError[] {
  const errs: FieldError[] = [];
  const io = new FieldPath('involvedObject');
  if (!e.involvedObject) return [field.required(io, '')];
  const ns = e.metadata?.namespace ?? '';
  const ions = e.involvedObject.namespace ?? '';
  if (ions && ns && ions !== ns) {
    errs.push(field.invalid(io.child('namespace'), ions, 'does not match event.namespace'));
  }
  if (!e.involvedObject.kind) errs.push(field.required(io.child('kind'), ''));
  if (e.reportingComponent) {
    errs.push(
      ...field.invalidEach(
        new FieldPath('reportingComponent'),
        e.reportingComponent,
        isDNS1123Subdomain(e.reportingComponent.replace(/\//g, '.')),
      ),
    );
  }
  if ((e.reportingInstance ?? '').length > REPORTING_INSTANCE_MAX)
    errs.push(field.tooLong(new FieldPath('reportingInstance'), '', REPORTING_INSTANCE_MAX));
  if ((e.action ?? '').length > ACTION_MAX) errs.push(field.tooLong(new FieldPath('action'), '', ACTION_MAX));
  if ((e.reason ?? '').length > REASON_MAX) errs.push(field.tooLong(new FieldPath('reason'), '', REASON_MAX));
  if ((e.message ?? '').length > NOTE_MAX) errs.push(field.tooLong(new FieldPath('message'), '', NOTE_MAX));
  if (e.type && e.type !== 'Normal' && e.type !== 'Warning') {
    errs.push(field.notSupported(new FieldPath('type'), e.type, ['Normal', 'Warning']));
  }
  return errs;
}

/** The strategy of core/v1 `events`. */
export function eventStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  return defaultStrategy(kind, {
    validate: (_ctx, obj) => validateEvent(obj as Event),
    validateUpdate: (_ctx, obj) => validateEvent(obj as Event),
  });
}
