/**
 * The IP families of a service (model: Kubernetes 1.21 with IPv6DualStack, `tryDefaultValidateServiceClusterIPFields`
 * of `pkg/registry/core/service/storage/rest.go`): defaults `ipFamilyPolicy` and `ipFamilies` from what the client
 * gave and what the cluster is configured for (the families of `--service-cluster-ip-range`, primary first), and
 * checks that they agree.
 *
 * - `ipFamilyPolicy` defaults to RequireDualStack when two families or two cluster IPs are given, else SingleStack.
 * - `ipFamilies` default to the families of the given cluster IPs, else the cluster's primary family; PreferDualStack
 *   and RequireDualStack add the other family when the cluster has it. RequireDualStack on a single-stack cluster, a
 *   family the cluster lacks, or two families with SingleStack are 422s.
 * - An update keeps what the client leaves out, may add the secondary family (PreferDualStack / RequireDualStack) and
 *   may drop it (SingleStack: the second cluster IP and family go), but never changes the primary family.
 * - ExternalName services have no families.
 */
import { type FieldError, FieldPath, field, type Service } from '@platform/api';

import { type IPFamily, ipFamilyOf } from './allocator';

const SPEC = new FieldPath('spec');

/** The cluster IPs a service names (`clusterIPs`, else `clusterIP`), `None` included. */
export function clusterIPsOf(s: Service): string[] {
  const spec = s.spec ?? {};
  if (spec.clusterIPs?.length) return [...spec.clusterIPs];
  return spec.clusterIP ? [spec.clusterIP] : [];
}

/** Fills `svc`'s policy and families (see the module comment); returns what is wrong. */
export function defaultIPFamilies(svc: Service, old: Service | undefined, cluster: readonly IPFamily[]): FieldError[] {
  const spec = (svc.spec ??= {});
  if ((spec.type ?? 'ClusterIP') === 'ExternalName') {
    delete spec.ipFamilies;
    delete spec.ipFamilyPolicy;
    return [];
  }
  const o = old && (old.spec?.type ?? 'ClusterIP') !== 'ExternalName' ? old.spec : undefined;
  if (o) {
    if (!spec.ipFamilyPolicy && o.ipFamilyPolicy) spec.ipFamilyPolicy = o.ipFamilyPolicy;
    if (!spec.ipFamilies?.length && o.ipFamilies?.length) spec.ipFamilies = [...o.ipFamilies];
    // A downgrade to one family lets the second address and family go.
    if (spec.ipFamilyPolicy === 'SingleStack' && (o.clusterIPs?.length ?? 0) > 1) {
      if (spec.clusterIPs && spec.clusterIPs.length > 1 && spec.clusterIPs[1] === o.clusterIPs?.[1])
        spec.clusterIPs = spec.clusterIPs.slice(0, 1);
      if (spec.ipFamilies && spec.ipFamilies.length > 1 && spec.ipFamilies[1] === o.ipFamilies?.[1])
        spec.ipFamilies = spec.ipFamilies.slice(0, 1);
    }
  }
  const errs: FieldError[] = [];
  const headless = spec.clusterIP === 'None';
  const ips = headless ? [] : clusterIPsOf(svc);
  const ipFamilies = ips.map(ipFamilyOf);
  let families = [...(spec.ipFamilies ?? [])] as IPFamily[];
  spec.ipFamilyPolicy ??= families.length === 2 || ips.length === 2 ? 'RequireDualStack' : 'SingleStack';
  const policy = spec.ipFamilyPolicy;
  ipFamilies.forEach((f, i) => {
    const given = families[i];
    if (f && given && f !== given) {
      errs.push(
        field.invalid(
          SPEC.child('clusterIPs').index(i),
          ips[i],
          `expected an ${given} value as indicated by \`ipFamilies[${i}]\``,
        ),
      );
    }
  });
  for (let i = families.length; i < ipFamilies.length; i++) {
    const f = ipFamilies[i];
    if (f) families.push(f);
  }
  if (families.length === 0) families = [cluster[0] ?? 'IPv4'];
  if (policy === 'SingleStack' && families.length > 1) {
    errs.push(
      field.invalid(
        SPEC.child('ipFamilyPolicy'),
        policy,
        "must be 'RequireDualStack' or 'PreferDualStack' when multiple 'ipFamilies' are specified",
      ),
    );
  }
  if (policy === 'RequireDualStack' && cluster.length < 2) {
    errs.push(
      field.invalid(SPEC.child('ipFamilyPolicy'), policy, 'this cluster is not configured for dual-stack services'),
    );
  }
  if (policy !== 'SingleStack' && families.length === 1 && cluster.length === 2) {
    families.push(families[0] === 'IPv4' ? 'IPv6' : 'IPv4');
  }
  families.forEach((f, i) => {
    const at = SPEC.child('ipFamilies').index(i);
    if (families.indexOf(f) !== i) errs.push(field.duplicate(at, f));
    else if (!cluster.includes(f)) errs.push(field.invalid(at, f, 'not configured on this cluster'));
  });
  if (families.length > 2) errs.push(field.tooMany(SPEC.child('ipFamilies'), families.length, 2));
  const oldPrimary = o?.ipFamilies?.[0];
  if (oldPrimary && families[0] !== oldPrimary && o?.clusterIP !== 'None' && !headless) {
    errs.push(field.invalid(SPEC.child('ipFamilies').index(0), families[0], 'primary ipFamily can not be changed'));
  }
  spec.ipFamilies = families;
  return errs;
}
