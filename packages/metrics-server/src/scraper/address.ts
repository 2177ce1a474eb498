/**
 * Where a node's agent is reached (model: metrics-server 0.5 `pkg/utils/address.go`, Kubernetes'
 * `GetPreferredNodeAddress`): the first address of the first preferred type the node has (a Hostname falls back to
 * the `kubernetes.io/hostname` label), on `--agent-port` or, with `--agent-use-node-status-port`, the port the agent
 * published in `status.daemonEndpoints.kubeletEndpoint.Port`.
 */
import { type Node } from '@platform/api';

/** The node address types, in metrics-server's default order of preference. */
export const DEFAULT_ADDRESS_TYPES = ['Hostname', 'InternalDNS', 'InternalIP', 'ExternalDNS', 'ExternalIP'] as const;

/** Every node address type `--agent-preferred-address-types` accepts. */
export const NODE_ADDRESS_TYPES: readonly string[] = DEFAULT_ADDRESS_TYPES;

/** A node that cannot be reached (no address of a preferred type). */
export class AddressError extends Error {}

/** The agent's host and port of a node; throws {@link AddressError} when the node has no preferred address. */
export function agentLocation(
  node: Node,
  o: { preferredAddressTypes: readonly string[]; port: number; useNodeStatusPort: boolean },
): { host: string; port: number } {
  const addresses = node.status?.addresses ?? [];
  let host: string | undefined;
  for (const type of o.preferredAddressTypes) {
    host = addresses.find((a) => a.type === type && a.address)?.address;
    if (!host && type === 'Hostname') host = node.metadata?.labels?.['kubernetes.io/hostname'];
    if (host) break;
  }
  if (!host)
    throw new AddressError(
      `no preferred addresses found; known addresses: [${addresses.map((a) => `{${a.type} ${a.address}}`).join(' ')}]`,
    );
  const statusPort = node.status?.daemonEndpoints?.kubeletEndpoint?.Port ?? 0;
  return { host, port: o.useNodeStatusPort && statusPort > 0 ? statusPort : o.port };
}
