import { isNotAcceptable, isUnsupportedMediaType } from '@platform/api';

import { negotiateInput, negotiateOutput, negotiatePatch, parseAccept } from './negotiate';

const views = { allowViews: true };

describe('negotiateOutput', () => {
  it.each([
    [undefined, 'json', 'object', 'application/json'],
    ['', 'json', 'object', 'application/json'],
    ['*/*', 'json', 'object', 'application/json'],
    ['application/*', 'json', 'object', 'application/json'],
    ['application/json', 'json', 'object', 'application/json'],
    ['application/yaml', 'yaml', 'object', 'application/yaml'],
    ['application/vnd.platform.protobuf', 'protobuf', 'object', 'application/vnd.platform.protobuf'],
    // client-go's request: Kubernetes' Protobuf name is served, and answered by that name.
    ['application/vnd.kubernetes.protobuf, */*', 'protobuf', 'object', 'application/vnd.kubernetes.protobuf'],
    [
      'application/vnd.kubernetes.protobuf,application/json',
      'protobuf',
      'object',
      'application/vnd.kubernetes.protobuf',
    ],
    ['application/vnd.platform.protobuf, application/json', 'protobuf', 'object', 'application/vnd.platform.protobuf'],
    ['application/json;as=Table;g=meta.platform;v=v1beta1', 'json', 'Table', 'application/json'],
    ['application/json;as=Table;g=meta.platform;v=v1', 'json', 'Table', 'application/json'],
    ['application/json;as=Table;g=meta.platform;v=v1beta1, application/json', 'json', 'Table', 'application/json'],
    [
      'application/json;as=PartialObjectMetadataList;g=meta.platform;v=v1',
      'json',
      'PartialObjectMetadataList',
      'application/json',
    ],
    // kubectl's request: meta.k8s.io is an alias of meta.platform.
    [
      'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json',
      'json',
      'Table',
      'application/json',
    ],
    // q values order the ranges
    ['application/json;q=0.5, application/yaml', 'yaml', 'object', 'application/yaml'],
    ['text/html, application/json;q=0.1', 'json', 'object', 'application/json'],
  ])('Accept %p', (accept, format, view, contentType) => {
    expect(negotiateOutput(accept, views)).toMatchObject({ format, view, contentType });
  });

  it.each([
    ['text/html'],
    ['application/xml'],
    ['application/json;as=Table;g=meta.k8s.io;v=v9'],
    ['application/json;as=Table;g=meta.example.com;v=v1'],
    ['application/json;as=Table;g=meta.platform;v=v9'],
    ['application/json;as=Nope;g=meta.platform;v=v1'],
    ['application/vnd.platform.protobuf;as=Table;g=meta.platform;v=v1'],
    ['application/json;q=0'],
    ['garbage'],
  ])('answers 406 for %p', (accept) => {
    let err: unknown;
    try {
      negotiateOutput(accept, views);
    } catch (e) {
      err = e;
    }
    expect(isNotAcceptable(err)).toBe(true);
  });

  it('answers a view in the group spelling the request used', () => {
    const kubectl =
      'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
    expect(negotiateOutput(kubectl, views)).toMatchObject({ viewGroup: 'meta.k8s.io', viewVersion: 'v1' });
    expect(negotiateOutput('application/json;as=Table;g=meta.platform;v=v1beta1', views)).toMatchObject({
      viewGroup: 'meta.platform',
      viewVersion: 'v1beta1',
    });
  });

  it('offers no views where they do not apply, and no YAML for streams', () => {
    expect(() => negotiateOutput('application/json;as=Table;g=meta.platform;v=v1', { allowViews: false })).toThrow(
      /only the following media types/,
    );
    expect(negotiateOutput('application/yaml, application/json', { allowViews: false, stream: true }).format).toBe(
      'json',
    );
  });

  it('parses parameters and quoted values', () => {
    expect(parseAccept('application/json; as="Table" ; q=0.9')).toEqual([
      { type: 'application', subtype: 'json', params: { as: 'Table' }, q: 0.9 },
    ]);
  });
});

describe('negotiateInput', () => {
  it.each([
    [undefined, 'json'],
    ['application/json', 'json'],
    ['application/json; charset=utf-8', 'json'],
    ['application/yaml', 'yaml'],
    ['application/vnd.platform.protobuf', 'protobuf'],
  ])('%p -> %s', (ct, format) => {
    expect(negotiateInput(ct)).toBe(format);
  });

  it.each([['text/plain'], ['application/xml'], ['application/merge-patch+json'], ['nonsense']])(
    'answers 415 for %p',
    (ct) => {
      let err: unknown;
      try {
        negotiateInput(ct);
      } catch (e) {
        err = e;
      }
      expect(isUnsupportedMediaType(err)).toBe(true);
      expect((err as Error).message).toContain('application/json, application/yaml, application/vnd.platform.protobuf');
    },
  );
});

describe('negotiatePatch', () => {
  const all = ['json', 'merge', 'strategic', 'apply'] as const;
  it('maps each patch content type', () => {
    expect(negotiatePatch('application/json-patch+json', all)).toBe('json');
    expect(negotiatePatch('application/merge-patch+json', all)).toBe('merge');
    expect(negotiatePatch('application/strategic-merge-patch+json; charset=utf-8', all)).toBe('strategic');
    expect(negotiatePatch('application/apply-patch+yaml', all)).toBe('apply');
  });

  it('answers 415 naming the accepted types', () => {
    expect(() => negotiatePatch('application/json', all)).toThrow(
      /application\/json-patch\+json, application\/merge-patch\+json/,
    );
    expect(() => negotiatePatch('application/strategic-merge-patch+json', ['json', 'merge'])).toThrow(/unknown format/);
    expect(() => negotiatePatch(undefined, all)).toThrow(/unknown format/);
  });
});
