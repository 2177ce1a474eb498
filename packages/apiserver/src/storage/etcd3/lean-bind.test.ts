import { AsyncLocalStorage, AsyncResource } from 'node:async_hooks';
import * as http2 from 'node:http2';
import { type AddressInfo } from 'node:net';

import { bindAddsAccessor, useLeanAsyncResourceBind } from './lean-bind';

beforeAll(() => useLeanAsyncResourceBind());

test('bound functions have no deprecated accessor, and keep their length', () => {
  const bound = new AsyncResource('t').bind((a: number, b: number) => a + b);
  expect(Object.getOwnPropertyDescriptor(bound, 'asyncResource')).toBeUndefined();
  expect(bound.length).toBe(2);
  expect(bound(2, 3)).toBe(5);
  expect(bindAddsAccessor()).toBe(false);
});

test("a bound function runs in its resource's async scope, with the this it is called with or the one given", () => {
  const als = new AsyncLocalStorage<string>();
  let resource!: AsyncResource;
  als.run('inside', () => (resource = new AsyncResource('t')));
  const seen = function (this: unknown, x: number): [string | undefined, unknown, number] {
    return [als.getStore(), this, x];
  };
  const bound = resource.bind(seen);
  const self = { name: 'caller' };
  expect(als.run('outside', () => bound.call(self, 1))).toEqual(['inside', self, 1]);
  const given = { name: 'given' };
  // Node's bind takes a `this` as its second argument (its types do not say so).
  const bindWithThis = resource.bind.bind(resource) as unknown as (fn: typeof seen, thisArg: unknown) => typeof seen;
  const boundThis = bindWithThis(seen, given);
  expect(als.run('outside', () => boundThis.call(self, 2))).toEqual(['inside', given, 2]);
  // By message: the bind may have been installed by another test file of this worker, whose TypeError is another realm's.
  expect(() => resource.bind(42 as never)).toThrow(/"fn" argument must be of type function/);
});

test('HTTP/2 client requests still work, and their callbacks keep the async context of the request', async () => {
  const server = http2.createServer((req, res) => res.end(`hello ${req.url}`));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const session = http2.connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  const als = new AsyncLocalStorage<number>();
  try {
    const answers = await Promise.all(
      [1, 2, 3].map((n) =>
        als.run(
          n,
          () =>
            new Promise<string>((resolve, reject) => {
              const stream = session.request({ ':path': `/${n}` });
              let body = '';
              stream.on('data', (c: Buffer) => (body += c.toString('utf8')));
              stream.on('end', () => resolve(`${body} in ${als.getStore() ?? 'none'}`));
              stream.on('error', reject);
            }),
        ),
      ),
    );
    expect(answers).toEqual(['hello /1 in 1', 'hello /2 in 2', 'hello /3 in 3']);
  } finally {
    session.close();
    await new Promise((r) => server.close(r));
  }
});
