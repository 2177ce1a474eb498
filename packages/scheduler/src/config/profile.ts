/** Resolving a profile of the configuration into what the scheduler runs. */
import { type ProfilePlugins } from '../framework/framework';
import { type Registry } from '../framework/registry';
import { type Profile } from '../scheduler';
import { defaultPlugins, mergePlugins, type PluginsSection } from './defaults';

/** A profile as written in the configuration. */
export interface ProfileSection {
  schedulerName?: string;
  plugins?: PluginsSection;
  pluginConfig?: { name: string; args?: unknown }[];
}

/** The profile's plugins (defaults merged) and args; `base` is the algorithm provider's defaults. */
export function resolveProfile(
  p: ProfileSection,
  base: ProfilePlugins = defaultPlugins(),
  registry?: Registry,
): Profile {
  let plugins = mergePlugins(base, p.plugins);
  if (registry) {
    const known = (r: { name: string }): boolean => registry.get(r.name) !== undefined;
    plugins = Object.fromEntries(Object.entries(plugins).map(([k, v]) => [k, v.filter(known)])) as ProfilePlugins;
  }
  return {
    schedulerName: p.schedulerName ?? 'default-scheduler',
    plugins,
    pluginConfig: new Map((p.pluginConfig ?? []).map((c) => [c.name, c.args])),
  };
}
