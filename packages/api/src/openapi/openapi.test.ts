import { ConfigMapKind } from '../kinds/core/v1/config-map';
import { Scheme } from '../scheme/scheme';
import { openApiDefinitions } from './openapi';

describe('openApiDefinitions', () => {
  const defs = openApiDefinitions(new Scheme().add(ConfigMapKind));

  it('describes a kind with its group-version-kind and properties', () => {
    expect(defs['io.platform.api.core.v1.ConfigMap']).toEqual({
      type: 'object',
      description: expect.stringContaining('ConfigMap'),
      properties: {
        apiVersion: { type: 'string', description: expect.stringContaining('APIVersion') },
        kind: { type: 'string', description: expect.stringContaining('Kind') },
        metadata: { description: 'Standard object metadata.', $ref: '#/definitions/io.platform.meta.v1.ObjectMeta' },
        immutable: { type: 'boolean', description: expect.any(String) },
        data: { type: 'object', additionalProperties: { type: 'string' }, description: expect.any(String) },
        binaryData: {
          type: 'object',
          additionalProperties: { type: 'string', format: 'byte' },
          description: expect.any(String),
        },
      },
      'x-kubernetes-group-version-kind': [{ group: '', version: 'v1', kind: 'ConfigMap' }],
    });
  });

  it('describes the list kind', () => {
    const list = defs['io.platform.api.core.v1.ConfigMapList'] as Record<string, unknown>;
    expect(list.required).toEqual(['items']);
    expect(list['x-kubernetes-group-version-kind']).toEqual([{ group: '', version: 'v1', kind: 'ConfigMapList' }]);
  });

  it('includes every referenced definition, with patch metadata and special formats', () => {
    const meta = defs['io.platform.meta.v1.ObjectMeta'] as { properties: Record<string, Record<string, unknown>> };
    expect(meta.properties.ownerReferences).toMatchObject({
      type: 'array',
      items: { $ref: '#/definitions/io.platform.meta.v1.OwnerReference' },
      'x-kubernetes-patch-merge-key': 'uid',
      'x-kubernetes-patch-strategy': 'merge',
    });
    expect(meta.properties.creationTimestamp).toMatchObject({ type: 'string', format: 'date-time' });
    expect(meta.properties.generation).toMatchObject({ type: 'integer', format: 'int64' });
    expect(defs['io.platform.meta.v1.OwnerReference']).toBeDefined();
    expect(defs['io.platform.meta.v1.ManagedFieldsEntry']).toBeDefined();
    // Every $ref resolves.
    const refs = JSON.stringify(defs).match(/#\/definitions\/[^"]+/g) ?? [];
    for (const r of refs) expect(defs[r.slice('#/definitions/'.length)]).toBeDefined();
  });
});
