import { fromProto, protoType, toProto } from '../../../schema/protobuf';
import { decodeInto } from '../../../schema/decode';
import { tableColumns, toTable } from '../../../table/table';
import { NodeMetricsKind, type PodMetrics, PodMetricsKind } from './metrics';

const NODE = {
  metadata: { name: 'n1', creationTimestamp: '2021-06-10T16:12:45Z', labels: { zone: 'a' } },
  timestamp: '2021-06-10T16:12:40Z',
  window: '15.025s',
  usage: { cpu: '123456789n', memory: '1205556Ki' },
};
const POD: PodMetrics = {
  metadata: { name: 'web', namespace: 'default', creationTimestamp: '2021-06-10T16:12:45Z' },
  timestamp: '2021-06-10T16:12:40Z',
  window: '15s',
  containers: [
    { name: 'a', usage: { cpu: '1500000n', memory: '1Mi' } },
    { name: 'b', usage: { cpu: '20m', memory: '512Ki' } },
  ],
};

describe('metrics.platform/v1beta1', () => {
  it.each([
    [NodeMetricsKind.schema.$id as string, NODE],
    [PodMetricsKind.schema.$id as string, POD],
  ])('%s decodes and round-trips through Protobuf', (id, sample) => {
    expect(decodeInto(id, structuredClone(sample))).toEqual({ ok: true, value: sample });
    const type = protoType(id);
    const back = fromProto(id, type.decode(type.encode(toProto(id, sample)).finish()) as never);
    expect(back).toEqual(sample);
  });

  it('is read-only and served by the metrics server, not stored', () => {
    expect(NodeMetricsKind).toMatchObject({ plural: 'nodes', namespaced: false, verbs: ['get', 'list'] });
    expect(PodMetricsKind).toMatchObject({ plural: 'pods', namespaced: true, verbs: ['get', 'list'] });
    expect(NodeMetricsKind.spec.persisted).toBe(false);
  });

  it("prints metrics-server's columns, a pod's containers added up", () => {
    const now = Date.parse('2021-06-10T16:13:00Z');
    const node = toTable(tableColumns(NodeMetricsKind.spec.columns), [NODE], { now });
    expect(node.columnDefinitions.map((c) => c.name)).toEqual(['Name', 'CPU', 'Memory', 'Window']);
    expect(node.rows[0]?.cells).toEqual(['n1', '123456789n', '1205556Ki', '15.025s']);
    const pod = toTable(tableColumns(PodMetricsKind.spec.columns), [POD], { now });
    expect(pod.rows[0]?.cells).toEqual(['web', '22m', '1536Ki', '15s']);
  });
});
