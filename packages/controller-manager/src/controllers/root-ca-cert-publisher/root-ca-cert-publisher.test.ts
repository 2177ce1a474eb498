/**
 * The root CA publisher against a real API server: every namespace gets `kube-root-ca.crt` with the CA, again
 * after it is deleted, and back to the CA alone after it is changed.
 */
import { ConfigMapKind, NamespaceKind } from '@platform/api';

import { type ControllerHarness, startControllerHarness, waitFor } from '../../testing/harness';
import { ROOT_CA_CONFIG_MAP, rootCACertPublisherController } from './index';

let h: ControllerHarness;
beforeAll(async () => {
  h = await startControllerHarness();
  h.start(rootCACertPublisherController);
}, 90_000);
afterAll(async () => {
  await h?.stop();
});

const caOf = async (ns: string): Promise<string | undefined> => {
  try {
    return (await h.client.resource(ConfigMapKind, ns).get(ROOT_CA_CONFIG_MAP)).data?.['ca.crt'];
  } catch {
    return undefined;
  }
};

it('publishes the CA in every namespace, and keeps it there', async () => {
  await waitFor('the CA in default', async () => (await caOf('default')) === h.server.ca);
  await h.client.resource(NamespaceKind).create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'fresh' } });
  await waitFor('the CA in a new namespace', async () => (await caOf('fresh')) === h.server.ca);

  await h.client.resource(ConfigMapKind, 'fresh').delete(ROOT_CA_CONFIG_MAP);
  await waitFor('the CA back after a delete', async () => (await caOf('fresh')) === h.server.ca);

  const cm = await h.client.resource(ConfigMapKind, 'fresh').get(ROOT_CA_CONFIG_MAP);
  await h.client.resource(ConfigMapKind, 'fresh').update({ ...cm, data: { 'ca.crt': 'tampered', extra: 'x' } });
  await waitFor('the CA restored after a change', async () => {
    const data = (await h.client.resource(ConfigMapKind, 'fresh').get(ROOT_CA_CONFIG_MAP)).data;
    return data?.['ca.crt'] === h.server.ca && data.extra === undefined;
  });
  expect(h.errors).toEqual([]);
}, 120_000);
