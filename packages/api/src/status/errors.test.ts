import { FieldPath, invalid as invalidField, required } from '../validation/field-errors';
import {
  alreadyExists,
  conflict,
  errorToStatus,
  forbidden,
  internalError,
  invalid,
  isAlreadyExists,
  isConflict,
  isNotFound,
  isStatusError,
  notFound,
  StatusError,
  suggestsClientDelay,
  timeout,
  tooManyRequests,
} from './errors';

const pods = { group: '', resource: 'pods' };
const deployments = { group: 'apps', resource: 'deployments' };

describe('Status errors', () => {
  it.each([
    [notFound(pods, 'x'), 404, 'NotFound', 'pods "x" not found'],
    [notFound(deployments, 'web'), 404, 'NotFound', 'deployments.apps "web" not found'],
    [alreadyExists(pods, 'x'), 409, 'AlreadyExists', 'pods "x" already exists'],
    [
      conflict(pods, 'x', 'the object has been modified'),
      409,
      'Conflict',
      'Operation cannot be fulfilled on pods "x": the object has been modified',
    ],
    [
      forbidden(pods, '', 'User "bob" cannot list resource "pods"'),
      403,
      'Forbidden',
      'pods is forbidden: User "bob" cannot list resource "pods"',
    ],
    [timeout('resource version too large', 1), 504, 'Timeout', 'Timeout: resource version too large'],
    [
      tooManyRequests('Too many requests, please try again later.', 1),
      429,
      'TooManyRequests',
      'Too many requests, please try again later.',
    ],
    [internalError(new Error('boom')), 500, 'InternalError', 'Internal error occurred: boom'],
  ])('%#: builds the Status Kubernetes sends', (err, code, reason, message) => {
    expect(err.status).toMatchObject({ apiVersion: 'v1', kind: 'Status', status: 'Failure', code, reason, message });
  });

  it('builds Invalid with one cause per field error', () => {
    const err = invalid({ group: '', kind: 'Pod' }, 'x', [
      required(new FieldPath('spec', 'containers')),
      invalidField(new FieldPath('metadata', 'name'), 'A_B', 'bad name'),
    ]);
    expect(err.status).toMatchObject({
      code: 422,
      reason: 'Invalid',
      message: 'Pod "x" is invalid: [spec.containers: Required value, metadata.name: Invalid value: "A_B": bad name]',
      details: {
        name: 'x',
        kind: 'Pod',
        causes: [
          { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.containers' },
          { reason: 'FieldValueInvalid', message: 'Invalid value: "A_B": bad name', field: 'metadata.name' },
        ],
      },
    });
    const one = invalid({ group: 'apps', kind: 'Deployment' }, 'web', [required(new FieldPath('spec', 'selector'))]);
    expect(one.message).toBe('Deployment.apps "web" is invalid: spec.selector: Required value');
  });

  it('checks by brand, so copies of the class from other module instances count', () => {
    const foreign = Object.assign(Object.create(Error.prototype) as object, {
      [Symbol.for('platform.api.StatusError')]: true,
      status: { code: 404, reason: 'NotFound' },
      reason: 'NotFound',
      code: 404,
    });
    expect(isStatusError(foreign)).toBe(true);
    expect(isNotFound(foreign)).toBe(true);
    expect(isStatusError(new Error('x'))).toBe(false);
    expect(isNotFound(undefined)).toBe(false);
  });

  it('classifies by reason, and by code when a server sent no reason', () => {
    expect(isConflict(conflict(pods, 'x', 'y'))).toBe(true);
    expect(isAlreadyExists(conflict(pods, 'x', 'y'))).toBe(false);
    expect(isNotFound(new StatusError({ code: 404, reason: '' }))).toBe(true);
  });

  it('turns anything that is not a StatusError into a 500', () => {
    const err = new StatusError({ code: 400, reason: 'BadRequest', message: 'x' });
    expect(errorToStatus(err)).toBe(err);
    expect(errorToStatus(new TypeError('oops')).status).toMatchObject({ code: 500, reason: 'InternalError' });
  });

  it('says how long to wait', () => {
    expect(suggestsClientDelay(tooManyRequests('x', 3))).toBe(3);
    expect(suggestsClientDelay(notFound(pods, 'x'))).toBeUndefined();
  });
});
