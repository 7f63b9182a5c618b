// What a runner gets for one tool: the manifest after the policy's effective
// limits are applied (policy/views.ts builds it). The shape lives here, beside
// the manifest it is drawn from, so the policy that builds it and the runners
// that read it both look down at registry/ and never at each other.
import type { RootAccess, SandboxMode, SideEffect } from './manifest.js';

export interface WorkspaceRoot {
  /** Absolute, symlink-resolved path. */
  readonly path: string;
  readonly access: RootAccess;
}

/** The upstream server a tool belongs to (SPEC section 2.1); its command is the server's. */
export interface UpstreamRef {
  /** The server's name (`fs` of `fs__read_file`). */
  readonly server: string;
  /** The tool's name as the server lists it. */
  readonly tool: string;
  /**
   * Which instance serves it: `read_only` tools one whose roots are all read-only,
   * the others one with the declared access (SPEC section 2.1).
   */
  readonly profile: 'read_only' | 'declared';
  readonly startupTimeoutMs: number;
}

/** Everything a runner needs to know about one tool; plain data, frozen. */
export interface RunSpec {
  readonly name: string;
  readonly mode: SandboxMode;
  /** Absolute folder holding the manifest. */
  readonly manifestDir: string;
  /** isolate/worker: absolute path of the ES module whose default export is the tool. */
  readonly entryPath?: string;
  /** process: argv with ./ and ../ elements already resolved to absolute paths. */
  readonly command?: readonly string[];
  /** Isolate heap, worker heap or process address space, in MiB. */
  readonly memoryMb: number;
  /** `output` is read as `json` by the runners; the supervisor reads the envelope. */
  readonly stdout: 'json' | 'text' | 'output';
  readonly isolation: 'none' | 'namespace';
  readonly persistent: boolean;
  readonly poolSize: number;
  /** The environment the process gets: only names allowed by manifest and policy, never a secret. */
  readonly env: Readonly<Record<string, string>>;
  readonly roots: readonly WorkspaceRoot[];
  /** The tool's class; a read_only tool's requests are held to GET, HEAD and OPTIONS. Undefined: unclassified. */
  readonly sideEffect?: SideEffect;
  /** Hosts (host or host:port) the tool may reach. Empty: no network. */
  readonly networkAllow: readonly string[];
  /** The flood cap (registry/result-limits.ts): bytes a runner takes from the tool before it stops it with output_limit. */
  readonly floodCapBytes: number;
  /**
   * The host's own configuration and state, never writable by a tool even inside a
   * read_write root: every manifest folder, the workspace's policies/ folder, every
   * --policy file, the log file and the state folder. Absolute, symlinks resolved where
   * they exist. Empty: nothing beyond the roots' access is enforced. One that does not
   * exist when a namespaced tool starts is not masked (a mount point would create it on
   * the host); if the tool creates it, the supervisor removes it and fails the call.
   */
  readonly protectedPaths: readonly string[];
  /**
   * The subset of protectedPaths a tool may not even read (the state folder: journal and
   * artifacts). The namespace sandbox hides them under an empty tmpfs.
   */
  readonly hiddenPaths: readonly string[];
  /** Host folders shown read-only at their paths in the namespace sandbox (an upstream server's node_modules). */
  readonly readOnlyPaths?: readonly string[];
  /** Set for a tool of an upstream MCP server: the runner calls it there. */
  readonly upstream?: UpstreamRef;
}
