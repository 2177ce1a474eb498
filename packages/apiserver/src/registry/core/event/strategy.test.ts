import { type Event, type FieldError } from '@platform/api';

import { validateEvent } from './strategy';

const show = (errs: FieldError[]): string[] => errs.map((e) => `${e.type} ${e.field}`);

describe('validateEvent', () => {
  const base: Event = {
    metadata: { name: 'e', namespace: 'default' },
    involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' },
  };
  it.each<[string, Partial<Event>, string[]]>([
    ['a valid event', {}, []],
    [
      'another namespace',
      { involvedObject: { kind: 'Pod', namespace: 'other' } },
      ['FieldValueInvalid involvedObject.namespace'],
    ],
    ['no involved kind', { involvedObject: { name: 'p' } }, ['FieldValueRequired involvedObject.kind']],
    ['an unknown type', { type: 'Odd' }, ['FieldValueNotSupported type']],
    ['a long reason', { reason: 'r'.repeat(129) }, ['FieldValueTooLong reason']],
  ])('%s', (_name, change, expected) => {
    expect(show(validateEvent({ ...base, ...change }))).toEqual(expected);
  });

  it('requires the involved object', () => {
    expect(show(validateEvent({ metadata: { name: 'e' } } as Event))).toEqual(['FieldValueRequired involvedObject']);
  });
});
