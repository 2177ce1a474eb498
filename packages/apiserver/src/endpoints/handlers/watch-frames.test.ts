import { type ApiObject } from '@platform/api';

import { deepFreeze } from '../../storage/immutable';
import { encodeJsonWatchEvent } from '../responses/encode-cache';
import { jsonFrame } from './watch';

function configMap(data: Record<string, string>): ApiObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', resourceVersion: '5' }, data } as ApiObject;
}

test("the watchers of a cached object's event share one JSON frame, one per event type", () => {
  const obj = deepFreeze(configMap({ k: 'v' }));
  const modified = jsonFrame('MODIFIED', obj);
  expect(jsonFrame('MODIFIED', obj)).toBe(modified);
  expect(modified.equals(encodeJsonWatchEvent('MODIFIED', obj))).toBe(true);
  expect(JSON.parse(modified.toString('utf8'))).toEqual({ type: 'MODIFIED', object: obj });
  const deleted = jsonFrame('DELETED', obj);
  expect(JSON.parse(deleted.toString('utf8'))).toEqual({ type: 'DELETED', object: obj });
  expect(jsonFrame('DELETED', obj)).toBe(deleted);
  expect(jsonFrame('MODIFIED', obj)).toBe(modified);
});

test('an object that may still change is encoded at each event', () => {
  const obj = configMap({ k: 'v' });
  expect(JSON.parse(jsonFrame('ADDED', obj).toString('utf8')).object.data).toEqual({ k: 'v' });
  (obj as { data: Record<string, string> }).data.k = 'w';
  expect(JSON.parse(jsonFrame('ADDED', obj).toString('utf8')).object.data).toEqual({ k: 'w' });
});
