/**
 * `--authorization-mode=Node` (model: Kubernetes 1.21 `plugin/pkg/auth/authorizer/node/node_authorizer.go`, with
 * the restrictions of the NodeRestriction admission plugin where the request's attributes can tell): a node agent,
 * the user `system:node:<name>` in the group `system:nodes`, may
 *
 * - read nodes (get its own; list and watch, which it does with a field selector on its name), create a Node, and
 *   update, patch or change the status of its own Node only;
 * - list and watch pods, create (mirror) pods, and get, delete, change the status of, or evict only pods bound to
 *   it (the graph of `graph.ts`);
 * - get (or list/watch by name) the secrets and config maps its pods reference; get the claims its pods reference
 *   and change their status; get the persistent volumes of those claims; request tokens (`serviceaccounts/token`)
 *   of its pods' service accounts;
 * - get, create, update, patch and delete its own Lease in `node-lease`;
 * - create, update and patch events; read services; get endpoints; create token and access reviews; read
 *   runtime classes and CSI objects; create and read certificate signing requests (Kubernetes' node rules).
 *
 * Anything else, and every request of a user that is not a node, gets no opinion.
 */
import {
  type Attributes,
  type AuthorizationHost,
  type AuthorizationResult,
  type Authorizer,
  noRules,
  type PolicyRuleLike,
  type RulesResult,
} from '../../authorizer';
import { rulesAllow } from '../rbac/rules';
import { NodeGraph, type ReferencedKind } from './graph';

/** The group of node agents. */
export const NODES_GROUP = 'system:nodes';
/** The user name prefix of node agents. */
export const NODE_USER_PREFIX = 'system:node:';
/** The namespace of node leases. */
export const NODE_LEASE_NAMESPACE = 'node-lease';

const READ = ['get', 'list', 'watch'];

/** What every node may do, whatever its pods (Kubernetes' `NodeRules`, minus what the graph decides). */
const NODE_RULES: PolicyRuleLike[] = [
  { verbs: ['create'], apiGroups: ['authentication.platform'], resources: ['tokenreviews'] },
  {
    verbs: ['create'],
    apiGroups: ['authorization.platform'],
    resources: ['subjectaccessreviews', 'localsubjectaccessreviews', 'selfsubjectaccessreviews'],
  },
  { verbs: READ, apiGroups: [''], resources: ['services'] },
  { verbs: ['list', 'watch', 'create'], apiGroups: [''], resources: ['nodes'] },
  { verbs: ['create', 'update', 'patch'], apiGroups: ['', 'events.platform'], resources: ['events'] },
  { verbs: ['list', 'watch', 'create'], apiGroups: [''], resources: ['pods'] },
  { verbs: ['get'], apiGroups: [''], resources: ['endpoints'] },
  {
    verbs: ['create', 'get', 'list', 'watch'],
    apiGroups: ['certificates.platform'],
    resources: ['certificatesigningrequests'],
  },
  { verbs: READ, apiGroups: ['node.platform'], resources: ['runtimeclasses'] },
  { verbs: ['get'], apiGroups: ['storage.platform'], resources: ['volumeattachments', 'csidrivers'] },
  { verbs: ['get', 'create', 'update', 'patch', 'delete'], apiGroups: ['storage.platform'], resources: ['csinodes'] },
];

const ALLOW: AuthorizationResult = { decision: 'allow', reason: '' };

function noOpinion(reason: string): AuthorizationResult {
  return { decision: 'noOpinion', reason: reason ? `node authorizer: ${reason}` : '' };
}

/** The node name of a node agent's user, or undefined when the user is not a node. */
export function nodeIdentity(user: { name: string; groups: string[] }): string | undefined {
  if (!user.name.startsWith(NODE_USER_PREFIX) || !user.groups.includes(NODES_GROUP)) return undefined;
  return user.name.slice(NODE_USER_PREFIX.length);
}

/** See the module comment. */
export class NodeAuthorizer implements Authorizer {
  readonly graph = new NodeGraph();

  async start(host: AuthorizationHost, signal: AbortSignal): Promise<void> {
    await Promise.all([
      host.reflect('', 'pods', this.graph.podHandler, signal),
      host.reflect('', 'persistentvolumes', this.graph.pvHandler, signal),
    ]);
  }

  async authorize(a: Attributes): Promise<AuthorizationResult> {
    return this.decide(a);
  }

  /** The decision, synchronously. */
  decide(a: Attributes): AuthorizationResult {
    const node = nodeIdentity(a.user);
    if (node === undefined) return noOpinion('');
    if (node === '') return noOpinion(`unknown node for user ${JSON.stringify(a.user.name)}`);
    if (a.resourceRequest) {
      const decided = this.decideResource(node, a);
      if (decided) return decided;
    }
    return rulesAllow(a, NODE_RULES) ? ALLOW : noOpinion('');
  }

  /** The resources whose access depends on the node; undefined: the static rules decide. */
  private decideResource(node: string, a: Attributes): AuthorizationResult | undefined {
    const { apiGroup: group, resource, subresource: sub, verb, name, namespace } = a;
    if (group === '' && resource === 'nodes') {
      if (!name) return undefined;
      if (name !== node) return noOpinion(`node ${JSON.stringify(node)} cannot ${verb} node ${JSON.stringify(name)}`);
      if (sub === '' && ['get', 'list', 'watch', 'update', 'patch'].includes(verb)) return ALLOW;
      if (sub === 'status' && ['get', 'update', 'patch'].includes(verb)) return ALLOW;
      return noOpinion('');
    }
    if (group === '' && resource === 'pods') {
      if (!name) return undefined;
      if (this.graph.nodeOfPod(namespace, name) !== node)
        return noOpinion(`no relationship found between node ${JSON.stringify(node)} and this object`);
      if (sub === '' && ['get', 'list', 'watch', 'delete'].includes(verb)) return ALLOW;
      if (sub === 'status' && ['get', 'update', 'patch'].includes(verb)) return ALLOW;
      if (sub === 'eviction' && verb === 'create') return ALLOW;
      return noOpinion('');
    }
    if (group === '' && (resource === 'secrets' || resource === 'configmaps'))
      return this.readReferenced(node, a, resource === 'secrets' ? 'secret' : 'configmap');
    if (group === '' && resource === 'persistentvolumeclaims') {
      if (sub === 'status') {
        if (verb !== 'update' && verb !== 'patch') return noOpinion('can only update or patch a claim status');
        return this.related(node, this.graph.references(node, 'pvc', namespace, name));
      }
      if (verb !== 'get' || sub) return noOpinion('can only get individual resources of this type');
      return this.related(node, this.graph.references(node, 'pvc', namespace, name));
    }
    if (group === '' && resource === 'persistentvolumes') {
      if (verb !== 'get' || sub) return noOpinion('can only get individual resources of this type');
      return this.related(node, this.graph.reachesPV(node, name));
    }
    if (group === '' && resource === 'serviceaccounts') {
      if (verb !== 'create' || sub !== 'token')
        return noOpinion('can only create tokens for individual service accounts');
      return this.related(node, this.graph.references(node, 'serviceaccount', namespace, name));
    }
    if (group === 'coordination.platform' && resource === 'leases') {
      if (!['get', 'create', 'update', 'patch', 'delete'].includes(verb))
        return noOpinion('can only get, create, update, patch, or delete a node lease');
      if (namespace !== NODE_LEASE_NAMESPACE)
        return noOpinion(`can only access leases in the ${JSON.stringify(NODE_LEASE_NAMESPACE)} system namespace`);
      // The name of a create is in its body: admission (NodeRestriction) checks it.
      if (verb !== 'create' && name !== node)
        return noOpinion('can only access node lease with the same name as the requesting node');
      return ALLOW;
    }
    return undefined;
  }

  private readReferenced(node: string, a: Attributes, kind: ReferencedKind): AuthorizationResult {
    if (!READ.includes(a.verb) || a.subresource) return noOpinion('can only read resources of this type');
    if (!a.name) return noOpinion('can only read namespaced object of this type');
    return this.related(node, this.graph.references(node, kind, a.namespace, a.name));
  }

  private related(node: string, ok: boolean): AuthorizationResult {
    return ok ? ALLOW : noOpinion(`no relationship found between node ${JSON.stringify(node)} and this object`);
  }

  rulesFor(): RulesResult {
    return noRules(true);
  }
}
