import { formatRawVersion, formatVersionLine, getVersionInfo, PLATFORM_VERSION, previousMinorVersion } from './version';

describe('version', () => {
  it('reads the platform release from the package manifest', () => {
    expect(PLATFORM_VERSION).toBe('0.1.0');
    expect(formatVersionLine('apiserver')).toBe('platform-apiserver v0.1.0');
  });

  it('serves Kubernetes-compatible fields with the platform as build metadata', () => {
    const info = getVersionInfo({});
    expect(info.major).toBe('1');
    expect(info.minor).toBe('21');
    expect(info.gitVersion).toBe('v1.21.0+platform.0.1.0');
    expect(info.goVersion).toBe(`node ${process.version}`);
    expect(info.platform).toBe(`${process.platform}/${process.arch}`);
    // This test runs inside the git checkout, so the commit is a real hash.
    expect(info.gitCommit).toMatch(/^[0-9a-f]{40}$/);
    expect(['clean', 'dirty']).toContain(info.gitTreeState);
  });

  it('takes release build information from the environment', () => {
    const info = getVersionInfo({
      PLATFORM_GIT_COMMIT: 'abc123',
      PLATFORM_GIT_TREE_STATE: 'clean',
      PLATFORM_BUILD_DATE: '2026-11-22T00:00:00Z',
    });
    expect(info.gitCommit).toBe('abc123');
    expect(info.buildDate).toBe('2026-11-22T00:00:00Z');
    expect(formatRawVersion(info)).toBe(
      `version.Info{Major:"1", Minor:"21", GitVersion:"v1.21.0+platform.0.1.0", GitCommit:"abc123", GitTreeState:"clean", BuildDate:"2026-11-22T00:00:00Z", GoVersion:"node ${process.version}", Compiler:"tsc", Platform:"${process.platform}/${process.arch}", PlatformVersion:"v0.1.0"}`,
    );
  });

  it('names the previous minor version', () => {
    expect(previousMinorVersion()).toBe('1.20');
  });
});
