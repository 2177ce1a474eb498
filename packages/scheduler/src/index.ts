/**
 * @platform/scheduler — the scheduler: queue, cache, framework with extension points, plugins, and the
 * `platform-scheduler` daemon.
 */
import { describeFlags, type ReferencePage } from '@platform/common';

import { schedulerCommand } from './cmd/main';

export { main, schedulerCommand } from './cmd/main';
export * from './framework/types';
export * from './framework/framework';
export * from './framework/registry';
export * from './framework/waiting-pods';
export * from './extender/http-extender';
export * from './framework/node-info';
export * from './framework/resource';
export * from './cache/cache';
export * from './queue/scheduling-queue';
export * from './scheduler';
export * from './metrics';
export { inTreeRegistry } from './plugins/registry';
export * from './config/config';
export { resolveProfile, type ProfileSection } from './config/profile';
export { defaultPlugins, mergePlugins, type PluginsSection } from './config/defaults';

/** The reference page of `platform-scheduler` (docs/reference/scheduler.md, `npm run docs`). */
export function referencePages(): ReferencePage[] {
  return [
    {
      file: 'scheduler.md',
      title: 'platform-scheduler',
      intro: [
        "The scheduler assigns pods to nodes: for each pending pod whose `spec.schedulerName` is one of its profiles, it filters the nodes that fit, scores them with the profile's plugins, and binds the pod to the best through `pods/binding`. See [docs/scheduler.md](../scheduler.md) for the configuration file and for writing a plugin.",
        '',
        'Options marked DEPRECATED are applied to the default configuration when `--config` is not given and ignored, with a warning, when it is (except `--algorithm-provider` and the policy options, which may overwrite the file).',
      ].join('\n'),
      sections: () => describeFlags(schedulerCommand().cmd),
    },
  ];
}
