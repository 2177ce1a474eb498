/**
 * The plugin registry (model: 1.21 `framework/runtime/registry.go`): plugin name → factory. Registering a name
 * twice fails, so an out-of-tree plugin cannot silently replace an in-tree one.
 */
import { type PluginFactory } from './types';

/** Name → factory. */
export class Registry {
  private readonly factories = new Map<string, PluginFactory>();

  constructor(entries: Record<string, PluginFactory> = {}) {
    for (const [name, f] of Object.entries(entries)) this.register(name, f);
  }

  register(name: string, factory: PluginFactory): void {
    if (this.factories.has(name)) throw new Error(`a plugin named ${name} already exists`);
    this.factories.set(name, factory);
  }

  get(name: string): PluginFactory | undefined {
    return this.factories.get(name);
  }

  names(): string[] {
    return [...this.factories.keys()].sort();
  }

  /** This registry with `other`'s plugins added (duplicates fail). */
  merge(other: Registry): Registry {
    const r = new Registry();
    for (const n of this.names()) r.register(n, this.factories.get(n) as PluginFactory);
    for (const n of other.names()) r.register(n, other.get(n) as PluginFactory);
    return r;
  }
}
