/**
 * `--admission-control-config-file` (model: apiserver `pkg/admission/config.go`): an AdmissionConfiguration of
 * `apiserver.config.platform/v1` (the Kubernetes spellings `apiserver.config.k8s.io/v1` and
 * `apiserver.k8s.io/v1alpha1` are read too) listing per-plugin configuration, inline (`configuration`) or in a
 * file of its own (`path`, relative to the configuration file's directory). YAML or JSON.
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';

import { load } from 'js-yaml';

const API_VERSIONS = [
  'apiserver.config.platform/v1',
  'apiserver.config.platform/v1alpha1',
  'apiserver.platform/v1alpha1',
  'apiserver.config.k8s.io/v1',
  'apiserver.k8s.io/v1alpha1',
];

/** Per-plugin configuration: plugin name → its parsed configuration object. */
export type PluginConfigs = ReadonlyMap<string, unknown>;

function parseDocument(text: string, file: string): unknown {
  try {
    return load(text);
  } catch (err) {
    throw new Error(`${file}: not valid YAML or JSON: ${(err as Error).message}`);
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Reads an admission configuration file. Throws an Error naming the file and the problem. */
export function readAdmissionConfigFile(file: string): PluginConfigs {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`--admission-control-config-file: cannot read ${file}: ${(err as Error).message}`);
  }
  return parseAdmissionConfig(text, file);
}

/** Parses the text of an admission configuration file (`file` resolves relative paths and names errors). */
export function parseAdmissionConfig(text: string, file: string): PluginConfigs {
  const doc = parseDocument(text, file);
  if (!isObject(doc)) throw new Error(`${file}: an AdmissionConfiguration object is expected`);
  if (doc.kind !== 'AdmissionConfiguration') {
    throw new Error(`${file}: kind must be AdmissionConfiguration, got ${JSON.stringify(doc.kind)}`);
  }
  if (typeof doc.apiVersion !== 'string' || !API_VERSIONS.includes(doc.apiVersion)) {
    throw new Error(
      `${file}: unsupported apiVersion ${JSON.stringify(doc.apiVersion)}; supported: ${API_VERSIONS.join(', ')}`,
    );
  }
  const out = new Map<string, unknown>();
  const plugins = doc.plugins ?? [];
  if (!Array.isArray(plugins)) throw new Error(`${file}: plugins must be a list`);
  plugins.forEach((p: unknown, i) => {
    const where = `${file}: plugins[${i}]`;
    if (!isObject(p)) throw new Error(`${where}: must be an object with name and path or configuration`);
    if (typeof p.name !== 'string' || !p.name) throw new Error(`${where}.name: required`);
    if (out.has(p.name)) throw new Error(`${where}.name: ${p.name} is configured twice`);
    if (p.path !== undefined && p.configuration !== undefined) {
      throw new Error(`${where}: path and configuration are exclusive`);
    }
    if (typeof p.path === 'string' && p.path) {
      const path = isAbsolute(p.path) ? p.path : resolve(dirname(file), p.path);
      let content: string;
      try {
        content = readFileSync(path, 'utf8');
      } catch (err) {
        throw new Error(`${where}.path: cannot read ${path}: ${(err as Error).message}`);
      }
      out.set(p.name, parseDocument(content, path));
    } else if (p.configuration !== undefined) {
      if (!isObject(p.configuration)) throw new Error(`${where}.configuration: must be an object`);
      out.set(p.name, p.configuration);
    } else {
      out.set(p.name, undefined);
    }
  });
  return out;
}
