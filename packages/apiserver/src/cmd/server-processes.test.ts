import { resolveServerProcesses } from './server-processes';

describe('resolveServerProcesses', () => {
  const etcd = { servers: ['http://127.0.0.1:2379'] };
  const sqlite = { servers: ['sqlite:///var/lib/platform/state.db'] };

  it.each([
    ['0 on etcd: one per CPU', 0, etcd, 4, 4],
    ['0 on etcd, one CPU', 0, etcd, 1, 1],
    ['0 on the embedded store: its one owner', 0, sqlite, 4, 1],
    ['1 on the embedded store', 1, sqlite, 4, 1],
    ['a number on etcd, whatever the CPUs', 3, etcd, 2, 3],
  ])('%s', (_what, requested, stores, cpus, want) => {
    expect(resolveServerProcesses(requested, stores, cpus)).toBe(want);
  });

  it('refuses more than one on the embedded store, naming the option and the store', () => {
    expect(() => resolveServerProcesses(2, sqlite, 4)).toThrow(
      '--server-processes=2: the embedded store sqlite:///var/lib/platform/state.db is owned by one process',
    );
  });

  it('counts an embedded store named by --store-servers-overrides', () => {
    const mixed = { servers: etcd.servers, overrides: ['/events#sqlite:///tmp/events.db'] };
    expect(resolveServerProcesses(0, mixed, 4)).toBe(1);
    expect(() => resolveServerProcesses(2, mixed, 4)).toThrow('sqlite:///tmp/events.db');
  });
});
