/** networking.platform/v1 NetworkPolicy: which traffic the selected pods may receive and send. */
import { type Static } from '@sinclair/typebox';

import { LabelSelectorSchema } from '../../meta/v1/types';
import { object, opt, ptr, ref, req, t } from '../../schema/schema';
import { defineKind, OBJECT_HEAD, schemaPrefix } from '../../scheme/kind';
import { AGE_COLUMN } from '../../table/table';
import { formatLabelSelector } from '../printing';
import { NETWORKING_GROUP } from './ingress';

const P = schemaPrefix(NETWORKING_GROUP, 'v1');

const IPBlockSchema = object(`${P}IPBlock`, {
  cidr: req(1, t.string(), 'A CIDR (`192.168.1.1/24`, `2001:db9::/64`).'),
  except: opt(2, t.array(t.string()), 'CIDRs inside `cidr` that are excluded.'),
});
const PeerSchema = object(`${P}NetworkPolicyPeer`, {
  podSelector: opt(1, ref(LabelSelectorSchema), 'Pods selected by labels (in the namespaces of namespaceSelector).'),
  namespaceSelector: opt(2, ref(LabelSelectorSchema), 'Namespaces selected by labels.'),
  ipBlock: opt(3, ref(IPBlockSchema), 'An IP block; exclusive with the selectors.'),
});
const PortSchema = object(`${P}NetworkPolicyPort`, {
  protocol: opt(1, ptr(t.string()), 'TCP (default), UDP or SCTP.'),
  port: opt(2, t.intOrString(), 'A port number or name; every port when unset.'),
  endPort: opt(3, ptr(t.int32()), 'The last port of a range starting at port (NetworkPolicyEndPort).'),
});
const IngressRuleSchema = object(`${P}NetworkPolicyIngressRule`, {
  ports: opt(1, t.array(ref(PortSchema)), 'Ports traffic may reach; every port when empty.'),
  from: opt(2, t.array(ref(PeerSchema)), 'Sources allowed; every source when empty.'),
});
const EgressRuleSchema = object(`${P}NetworkPolicyEgressRule`, {
  ports: opt(1, t.array(ref(PortSchema)), 'Ports traffic may go to; every port when empty.'),
  to: opt(2, t.array(ref(PeerSchema)), 'Destinations allowed; every destination when empty.'),
});
const SpecSchema = object(`${P}NetworkPolicySpec`, {
  podSelector: req(1, ref(LabelSelectorSchema), 'The pods the policy applies to; empty selects every pod.'),
  ingress: opt(2, t.array(ref(IngressRuleSchema)), 'Ingress rules.'),
  egress: opt(3, t.array(ref(EgressRuleSchema)), 'Egress rules.'),
  policyTypes: opt(4, t.array(t.string()), 'Ingress, Egress or both.'),
});

/** NetworkPolicy, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const NetworkPolicySchema = object(
  `${P}NetworkPolicy`,
  { ...OBJECT_HEAD, spec: opt(2, ref(SpecSchema), 'Desired behavior of the policy.') },
  { description: 'NetworkPolicy describes what network traffic is allowed for a set of Pods.' },
);
/** A NetworkPolicy object in its JSON form. */
export type NetworkPolicy = Static<typeof NetworkPolicySchema>;

/** The NetworkPolicy kind: discovery facts, defaults (1.21 `SetDefaults_NetworkPolicy`) and printer columns. */
export const NetworkPolicyKind = defineKind({
  group: NETWORKING_GROUP,
  version: 'v1',
  kind: 'NetworkPolicy',
  plural: 'networkpolicies',
  shortNames: ['netpol'],
  scope: 'Namespaced',
  schema: NetworkPolicySchema,
  defaults(np) {
    const spec = np.spec;
    if (!spec) return;
    for (const rule of [...(spec.ingress ?? []), ...(spec.egress ?? [])]) {
      for (const port of rule.ports ?? []) port.protocol ??= 'TCP';
    }
    if (!spec.policyTypes || spec.policyTypes.length === 0) {
      spec.policyTypes = ['Ingress'];
      if ((spec.egress?.length ?? 0) > 0) spec.policyTypes.push('Egress');
    }
  },
  columns: [
    {
      name: 'Pod-Selector',
      type: 'string',
      description: 'The pods the policy applies to.',
      cell: (o) => formatLabelSelector(o.spec?.podSelector),
    },
    AGE_COLUMN,
  ],
});
