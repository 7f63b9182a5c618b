// The Manifest type: one tool's YAML after schema validation and
// normalization (defaults applied, paths resolved). Frozen once loaded.
import type { ValidateFunction } from 'ajv';
import type { YamlSource } from '../config/yaml-source.js';
import type { ManifestEffects } from './manifest-effects.js';

export type SideEffect = 'read_only' | 'local_mutation' | 'remote_mutation' | 'destructive';
/** Where a tool runs (SPEC section 3); the runners are built by mode. */
export type SandboxMode = 'isolate' | 'worker' | 'process';
export type RootAccess = 'read' | 'read_write';
export type ToolFormat = 'json' | 'xml' | 'ptype';

export interface ManifestRoot {
  /** As written, e.g. "${WORKSPACE}/docs". */
  readonly declared: string;
  /** Absolute, with ${WORKSPACE} substituted and symlinks resolved. */
  readonly path: string;
  readonly access: RootAccess;
}

export interface ManifestSandbox {
  readonly mode: SandboxMode;
  /** As declared; undefined means the mode's default (the policy's maxMemoryMb caps either). */
  readonly memoryMb?: number;
  /** process: argv, ./ and ../ elements resolved to absolute paths inside the manifest folder. */
  readonly command?: readonly string[];
  /** output: one `{"toolhost/output": ...}` object (SPEC 5.1). */
  readonly stdout: 'json' | 'text' | 'output';
  readonly isolation: 'none' | 'namespace';
  readonly persistent: boolean;
  readonly poolSize: number;
  /** Names passed through from the host environment (the list form, and null values of the map form). */
  readonly env: readonly string[];
  /** Values set as written in the manifest (${WORKSPACE} expanded), by name; never read from the host. */
  readonly envLiterals: Readonly<Record<string, string>>;
}

/** Where an upstream server's tool came from (SPEC section 2.1). */
interface ManifestUpstream {
  readonly server: string;
  /** The tool's name as the server lists it. */
  readonly tool: string;
  /** The `tools:` key that classified it; undefined when none matched. */
  readonly entry?: string;
  /** The server's own annotations: shown as unverified hints, never trusted. */
  readonly hints?: Readonly<Record<string, unknown>>;
  readonly startupTimeoutMs: number;
  /** node_modules folders the server's command resolves packages from, shown read-only. */
  readonly readOnlyPaths: readonly string[];
  /** True when the server has a read_write root: its read_only tools then get an instance of their own (with split). */
  readonly hasWritableRoot: boolean;
  /** The server's `instances` (default split): with one, every tool shares the instance with the declared access. */
  readonly instances: 'split' | 'one';
  /** The tool's own title, as the server lists it (bounded; redacted where it is listed). */
  readonly title?: string;
  /** The tool's `_meta` as the server lists it (bounded, the host's keys left out; redacted where it is listed). */
  readonly meta?: Readonly<Record<string, unknown>>;
  /** Set on the stand-in that starts the server to read its listing: the policy's verdict on it is the server's. */
  readonly probe?: true;
}

export interface Manifest {
  readonly name: string;
  readonly description: string;
  /** Undefined: the tool is unclassified (refused under a strict policy). */
  readonly sideEffect?: SideEffect;
  readonly idempotent: boolean;
  /** Honoured only for read_only tools. */
  readonly concurrencySafe: boolean;
  readonly timeoutMs: number;
  readonly sandbox: ManifestSandbox;
  /** isolate/worker: absolute path of the entry module, inside the manifest folder. */
  readonly entry?: string;
  readonly roots: readonly ManifestRoot[];
  readonly networkAllow: readonly string[];
  /** Undefined: the policy's maxResultBytes applies. */
  readonly maxResultBytes?: number;
  readonly format: ToolFormat;
  readonly approval: 'auto' | 'always';
  /** A success completes the agent's run (SPEC 5.2). */
  readonly terminal: boolean;
  /** What a call writes, shown to whoever approves it (SPEC section 2 `effects`); undefined: not declared. */
  readonly effects?: ManifestEffects;
  /** The input JSON Schema as written (an object schema). */
  readonly input: Readonly<Record<string, unknown>>;
  readonly output?: Readonly<Record<string, unknown>>;
  /** Compiled once at load (Ajv strict, without allErrors: arguments are untrusted). */
  readonly validateInput: ValidateFunction;
  readonly validateOutput?: ValidateFunction;
  /** Absolute path of the manifest file. */
  readonly file: string;
  /** Path for people: relative to the working directory when inside it. */
  readonly displayFile: string;
  /** Absolute folder holding the manifest. */
  readonly dir: string;
  /** Positions of keys in the file, for explain and validate. */
  readonly source: YamlSource;
  /** Set for a tool of an upstream server; `file` is then the server manifest. */
  readonly upstream?: ManifestUpstream;
}
