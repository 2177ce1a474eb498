/**
 * @platform/node-agent — the node agent: pod sources, runtimes (cri, builtin, simulated), pod workers, probes,
 * status, node registration, eviction, server.
 */
import { describeFlags, type ReferencePage } from '@platform/common';

import { nodeAgentCommand } from './cmd/main';

export { main, nodeAgentCommand } from './cmd/main';
export * from './runtime/runtime';
export { Agent, type AgentDeps } from './agent';
export { AgentOptions, type AgentValues, defaultAgentValues } from './cmd/options';
export { BuiltinRuntime, type BuiltinRuntimeOptions } from './runtime/builtin/builtin-runtime';
export { SimulatedNodes } from './runtime/simulated/simulated-nodes';

/** The options reference of `platform-node-agent` (docs/reference/node-agent.md), from the same definitions as `--help`. */
export function referencePages(): ReferencePage[] {
  return [
    {
      file: 'node-agent.md',
      title: 'platform-node-agent',
      intro: [
        'The node agent runs on each node: it registers the node, runs the pods bound to it (and static pods from files or a URL) through a container runtime, probes them and reports their status. See [the node agent guide](../node-agent.md) for what it does and how it differs from the Kubernetes 1.21 kubelet.',
        '',
        'Options marked deprecated "should be set via the config file": they are also fields of the `--config` file (`kind: AgentConfiguration`, `apiVersion: agent.config.platform/v1beta1`); a value given on the command line wins over the file. Options of features the agent does not have (CNI, iptables, cloud providers, the CPU manager, dynamic configuration) are accepted with their defaults and have no effect.',
      ].join('\n'),
      sections: () => describeFlags(nodeAgentCommand().cmd),
    },
  ];
}
