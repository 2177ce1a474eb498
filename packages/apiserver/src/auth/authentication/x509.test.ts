import { X509Certificate } from 'node:crypto';

import { testCA } from './testing/pki';
import { certificateUser, type ClientChain, verifyChain } from './x509';

function chain(leafPem: string, intermediates: string[] = []): ClientChain {
  const leaf = new X509Certificate(leafPem);
  const subject: Record<string, string | string[]> = {};
  for (const line of leaf.subject.split('\n')) {
    const [k, v] = line.split('=') as [string, string];
    const prev = subject[k];
    subject[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return { leaf, intermediates: intermediates.map((p) => new X509Certificate(p)), subject };
}

describe('client certificate chains', () => {
  it('verifies through intermediates to a root, and says why when it cannot', async () => {
    const root = await testCA('root');
    const inter = await root.sign({ cn: 'intermediate', ca: true });
    const leaf = await inter.sign({ cn: 'carol', orgs: ['a', 'b'] });
    const notCA = await root.sign({ cn: 'not-a-ca' });
    const under = await notCA.sign({ cn: 'dave' });
    const roots = [new X509Certificate(root.certPem)];
    const now = Date.now();

    expect(() => verifyChain(chain(leaf.certPem, [inter.certPem]), roots, now)).not.toThrow();
    expect(certificateUser(chain(leaf.certPem))).toEqual({ name: 'carol', groups: ['a', 'b'] });
    expect(() => verifyChain(chain(leaf.certPem), roots, now)).toThrow('unknown authority');
    expect(() => verifyChain(chain(under.certPem, [notCA.certPem]), roots, now)).toThrow('unknown authority');
    expect(() => verifyChain(chain(leaf.certPem, [inter.certPem]), roots, now + 5 * 86400_000)).toThrow('expired');
  });
});
