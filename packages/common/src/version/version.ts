/**
 * The platform's version, served at `/version` and printed by `--version`. The platform implements the Kubernetes
 * 1.21 API, so the Kubernetes-compatible fields (`major`, `minor`, `gitVersion`) say 1.21 — kubectl reads them for
 * its version-skew check — with the platform release carried as build metadata (`v1.21.0+platform.0.1.0`, in the
 * manner of k3s' `v1.21.0+k3s1`). `--version` prints the platform release (`platform-apiserver v0.1.0`).
 *
 * Git information comes from the environment (`PLATFORM_GIT_COMMIT`, `PLATFORM_GIT_TREE_STATE`,
 * `PLATFORM_BUILD_DATE`, set by release builds), else from `git` run once in the package's checkout, else `unknown`.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The Kubernetes API version this platform follows. */
export const KUBERNETES_VERSION = { major: 1, minor: 21, patch: 0 } as const;

/** The `/version` document (Kubernetes' `version.Info`, JSON field names). */
export interface VersionInfo {
  major: string;
  minor: string;
  gitVersion: string;
  gitCommit: string;
  gitTreeState: string;
  buildDate: string;
  /** Kubernetes puts the Go version here; we put the Node.js version (`node v20.20.2`). */
  goVersion: string;
  compiler: string;
  platform: string;
  /** The platform's own release (`v0.1.0`). Not in Kubernetes; clients ignore it. */
  platformVersion: string;
}

function readPackageVersion(): string {
  // src/version/ (tests) and lib/version/ (built) are both two levels below the package root.
  try {
    const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/** The platform release from the package manifest, e.g. `0.1.0`. */
export const PLATFORM_VERSION: string = readPackageVersion();

function git(args: string[]): string | undefined {
  try {
    return execFileSync('git', args, {
      cwd: __dirname,
      encoding: 'utf8',
      timeout: 2000,
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return undefined;
  }
}

let cached: VersionInfo | undefined;

/** The version document of this build; computed once (runs `git` at most twice per process). */
export function getVersionInfo(env: NodeJS.ProcessEnv = process.env): VersionInfo {
  if (cached && env === process.env) return cached;
  const commit = env.PLATFORM_GIT_COMMIT || git(['rev-parse', 'HEAD']) || 'unknown';
  let treeState = env.PLATFORM_GIT_TREE_STATE;
  if (!treeState) {
    const status = commit === 'unknown' ? undefined : git(['status', '--porcelain', '--untracked-files=no', '--', '.']);
    treeState = status === undefined ? 'unknown' : status === '' ? 'clean' : 'dirty';
  }
  const { major, minor, patch } = KUBERNETES_VERSION;
  const info: VersionInfo = {
    major: String(major),
    minor: String(minor),
    gitVersion: `v${major}.${minor}.${patch}+platform.${PLATFORM_VERSION}`,
    gitCommit: commit,
    gitTreeState: treeState,
    buildDate: env.PLATFORM_BUILD_DATE || '1970-01-01T00:00:00Z',
    goVersion: `node ${process.version}`,
    compiler: 'tsc',
    platform: `${process.platform}/${process.arch}`,
    platformVersion: `v${PLATFORM_VERSION}`,
  };
  if (env === process.env) cached = info;
  return info;
}

/** `--version` output: `platform-<component> v0.1.0`. */
export function formatVersionLine(component: string): string {
  return `platform-${component} v${PLATFORM_VERSION}`;
}

/** `--version=raw` output: every field, Go `%#v` style as Kubernetes prints `version.Info`. */
export function formatRawVersion(info: VersionInfo = getVersionInfo()): string {
  const fields: [string, string][] = [
    ['Major', info.major],
    ['Minor', info.minor],
    ['GitVersion', info.gitVersion],
    ['GitCommit', info.gitCommit],
    ['GitTreeState', info.gitTreeState],
    ['BuildDate', info.buildDate],
    ['GoVersion', info.goVersion],
    ['Compiler', info.compiler],
    ['Platform', info.platform],
    ['PlatformVersion', info.platformVersion],
  ];
  return `version.Info{${fields.map(([k, v]) => `${k}:${JSON.stringify(v)}`).join(', ')}}`;
}

/** The previous minor version (`1.20`), the only value `--show-hidden-metrics-for-version` accepts. */
export function previousMinorVersion(): string {
  return `${KUBERNETES_VERSION.major}.${KUBERNETES_VERSION.minor - 1}`;
}
