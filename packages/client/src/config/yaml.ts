/**
 * YAML (and so JSON) documents of configuration files, for daemons that read files besides the client
 * configuration (`--leader-migration-config`), through the same parser as `loadClientConfig`.
 */
import { load as loadYaml } from 'js-yaml';

/** Parses one YAML document; throws an `Error` whose message says where the text is malformed. */
export function parseYamlDocument(text: string): unknown {
  return loadYaml(text);
}
