// The host configuration with its upstream servers' tools (SPEC section 2.1):
// a first load finds the `kind: Server` manifests and how each may start, the
// servers are started in their sandboxes and listed, and the second load turns
// the listings into tools. serve, validate and list all come through here.
import { loadHostConfig, type HostConfig, type LoadHostConfigOptions } from './host-config.js';
import type { Logger } from './log.js';
import { listUpstreamServers, listUpstreamServersKeeping, ProcessServices, type ServerInstance } from './runner/index.js';
import { createRedactor } from './supervisor/redact.js';

/**
 * loadHostConfig, with each upstream server started once to read its tools
 * (validate, list: no host, so the servers go through services of their own,
 * closed once they are listed and stopped).
 */
export async function loadHostConfigWithServers(options: LoadHostConfigOptions, deps: { readonly logger: Logger }): Promise<HostConfig> {
  const first = loadHostConfig(options);
  if (first.serverProbes.size === 0 || first.problems.length > 0) return first;
  const services = new ProcessServices({ logger: deps.logger });
  try {
    const serverListings = await listUpstreamServers(first.serverProbes, { ...deps, services, redactLog: logRedactorOf(first) });
    return loadHostConfig({ ...options, serverListings });
  } finally {
    await services.close();
  }
}

/**
 * The same, keeping each server that listed running (by server name) so the host can
 * serve its first calls with it instead of starting it again; the caller owns them.
 * They are started through the host's `services`, whose groups track them from the start.
 */
export async function loadHostConfigKeepingServers(
  options: LoadHostConfigOptions,
  deps: { readonly logger: Logger; readonly services: ProcessServices },
): Promise<{ config: HostConfig; instances: Map<string, ServerInstance> }> {
  const first = loadHostConfig(options);
  if (first.serverProbes.size === 0 || first.problems.length > 0) return { config: first, instances: new Map() };
  const { listings, instances } = await listUpstreamServersKeeping(first.serverProbes, { ...deps, redactLog: logRedactorOf(first) }, true);
  return { config: loadHostConfig({ ...options, serverListings: listings }), instances };
}

// What a server logs while it is listed (and after, when the host keeps it) is redacted like
// the rest of the host's log of tools: the secret values of the host's environment, host paths.
function logRedactorOf(config: HostConfig): (text: string, maxChars: number) => string {
  const redact = createRedactor({ secretValues: config.secretValues(), visibleRoots: [config.workspace] });
  return (text, maxChars) => redact.cut(text, maxChars);
}
