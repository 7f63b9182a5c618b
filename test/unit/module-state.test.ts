// src/ keeps no mutable state in its modules (STYLE section 2): per-host state
// lives in the objects a host builds (ProcessServices: spawner, process groups,
// pids cgroups, SandboxFacts, prepared sandboxes, isolate processes; the
// journal, the registry, the supervisor), so two hosts in one process share
// nothing. This parses every source of src/ with the TypeScript compiler and
// fails on a module-level `let`/`var`, a module-level `const` made with `new …`
// (a Map, a Set, a class instance: a cache or a default instance), or a mutable
// static class field, unless it is an immutable constant or named shared state
// on the allowlists below, each with its reason.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC_DIR = fileURLToPath(new URL('../../src', import.meta.url));

/**
 * Module-level constants made with `new` that hold no state, by `file:name`.
 * Keep it short; each says why it is immutable.
 */
const IMMUTABLE_CONSTANTS: ReadonlyMap<string, string> = new Map([
  // URLs of the code the sandboxes run, resolved against this module: never written to.
  ['runner/process/spawner-client.ts:SPAWNER_URL', 'URL of src/runner/host-helpers/spawner.mjs'],
  ['runner/worker/worker-pool.ts:WORKER_ENTRY_URL', 'URL of sandbox/worker/worker-entry.mjs'],
  ['runner/isolate/isolate-sandbox.ts:SANDBOX_CODE_URL', 'URL of sandbox/, the code the isolate process runs'],
  ['runner/isolate/isolate-sandbox.ts:ISOLATE_PROCESS_URL', 'URL of sandbox/isolate/isolate-process.mjs'],
  ['runner/isolate/isolate-sandbox.ts:PRELUDE_URL', 'URL of sandbox/isolate/isolate-prelude.mjs'],
  // ReadonlySet tables of names, typed so that nothing can add to them.
  ['runner/bwrap/egress-request-head.ts:HOP_HEADERS', 'ReadonlySet of hop-by-hop header names'],
  ['runner/bwrap/argv.ts:ETC_ALLOWLIST_PATHS', 'ReadonlySet of the allowlisted /etc paths'],
  // A fatal, non-streaming decoder keeps nothing between decode() calls.
  ['runner/process/output-cap.ts:STRICT_UTF8', 'TextDecoder used only without { stream: true }'],
  ['protocol/boundary.ts:STRICT_UTF8', 'TextDecoder used only without { stream: true }'],
  ['protocol/boundary.ts:LOSSY_UTF8', 'TextDecoder used only without { stream: true }'],
  ['supervisor/result/parse.ts:UTF8', 'TextDecoder used only without { stream: true }'],
  ['supervisor/upstream-resource.ts:STRICT_UTF8', 'TextDecoder used only without { stream: true }'],
  ['protocol/early-initialize.ts:STRICT_UTF8', 'TextDecoder used only without { stream: true }'],
  ['protocol/stdio-early.ts:LOSSY_UTF8', 'TextDecoder used only without { stream: true }'],
  ['terminal/table.ts:SEGMENTER', 'Intl.Segmenter keeps nothing between segment() calls'],
  ['audit/journal-error.ts:REFUSALS', 'Set of refusal codes, never added to'],
  ['cli/fuzz.ts:REACHED_TOOL', 'Set of codes, never added to'],
  ['cli/import-warnings.ts:DOWNLOADING_LAUNCHERS', 'Set of launcher names, never added to'],
  ['policy/rules/rule-cost.ts:COMPREHENSIONS', 'Set of CEL macro names, never added to'],
  ['protocol/call-fast-path.ts:TOOLS_CALL_KEYS', 'Set of JSON-RPC key names, never added to'],
  ['protocol/call-fast-path.ts:PARAMS_KEYS', 'Set of key names, never added to'],
  ['protocol/call-fast-path.ts:RESULT_KEYS', 'Set of key names, never added to'],
  ['protocol/early-initialize.ts:REQUEST_KEYS', 'ReadonlySet of JSON-RPC key names'],
  ['protocol/early-initialize.ts:PARAMS_KEYS', 'ReadonlySet of initialize param names'],
  ['protocol/early-initialize.ts:CLIENT_INFO_KEYS', 'ReadonlySet of clientInfo key names'],
  ['supervisor/redact-error.ts:SECRETS_ONLY_KEYS', 'Set of detail keys, never added to'],
  ['supervisor/result/envelope-parts.ts:IMAGE_TYPES', 'Set of MIME types, never added to'],
  ['supervisor/result/envelope-parts.ts:AUDIO_TYPES', 'Set of MIME types, never added to'],
  ['supervisor/result/envelope-parts.ts:OTHER_TYPES', 'Set of MIME types, never added to'],
  ['supervisor/session-counters.ts:FAILURE_RUN_CODES', 'Set of error codes, never added to'],
  ['supervisor/text-mime.ts:TEXT_APPLICATION_TYPES', 'Set of MIME types, never added to'],
  ['telemetry/otel.ts:TRACED_STAGES', 'Set of stage names, never added to'],
  ['audit/sqlite/record-writer.ts:THREAD_URL', 'URL of the writer thread module'],
  ['protocol/protocol-fd.ts:HANDLE_ECHO_URL', 'URL of the handle-echo helper'],
  ['policy/rules/cel-env.ts:URL_HELPERS', 'the CEL `url` value: methods only, no fields'],
]);

/**
 * Module-level state kept on purpose, by `file:name`: what every host in the process may
 * share because it is derived from constants (a compiled schema, a memo of a pure function),
 * attached to an object rather than to a host (WeakMap, WeakSet), or process-wide by nature
 * (a bench's histograms, random bytes). Each says why sharing it is safe.
 */
const SHARED_STATE: ReadonlyMap<string, string> = new Map([
  // Compiled once from constant schemas and environments, the same for every host.
  ['registry/manifest-schema.ts:cachedSchema', 'the manifest schema read on first use'],
  ['registry/ajv.ts:metaSchemaChecks', 'per draft, the JSON Schema meta-schema compiled on first use'],
  ['policy/rules/cel-env.ts:environment', 'the CEL environment built on first use'],
  ['runner/upstream/server-instance.ts:clientSdk', 'the MCP client library, imported on first use'],
  ['runner/upstream/server-instance.ts:clientSdkLoading', 'the import of the MCP client library in flight'],
  // Memos of pure functions: the same input gives the same value on any host.
  ['policy/globs.ts:cache', 'glob text → RegExp'],
  ['policy/rules/path-helpers.ts:matchers', 'glob text → matcher'],
  // Facts attached to an object, gone with it: nothing outlives the host that made the object.
  ['cli/args.ts:CONFIG_OF', 'parsed arguments → their config file'],
  ['log-flat-line.ts:flatLoggers', 'loggers that may take the flat line path'],
  ['policy/tool-decision.ts:decided', 'an assessment → its decision'],
  ['registry/schema-checks.ts:CHECKED', 'a schema object → its compiled check'],
  ['registry/server-tools.ts:FINGERPRINTS', 'a tool definition → its fingerprint'],
  ['supervisor/protected-created.ts:writableProtected', 'a manifest → its protected paths'],
  // Reused within one synchronous call and reset at its start: no two calls ever share it.
  ['protocol/json-scan.ts:SCANNER', 'the scanner of one synchronous scan'],
  // Process-wide by nature.
  ['supervisor/call-id.ts:poolAt', 'the read position in a block of random bytes for call ids'],
  ['diagnostics/event-loop.ts:sandboxStartWork', 'a histogram the bench asks for; undefined otherwise'],
  ['diagnostics/stage-times.ts:byTool', 'histograms the bench asks for; undefined otherwise'],
  ['audit/sqlite/wal-index.ts:descriptors', 'one -shm descriptor per file and process: closing any descriptor of a file drops every POSIX lock the process holds on it'],
]);

interface Finding {
  readonly at: string;
  readonly what: string;
}

/** Every module-level binding of `source` that can hold state, as `file:name` with what it is. */
function moduleState(file: string, source: string): Finding[] {
  const tree = parse(file, source);
  const findings: Finding[] = [];
  for (const statement of tree.statements) {
    if (ts.isVariableStatement(statement)) {
      const flags = statement.declarationList.flags;
      const isConst = (flags & ts.NodeFlags.Const) !== 0;
      for (const declaration of statement.declarationList.declarations) {
        const name = declaration.name.getText(tree);
        if (!isConst) {
          findings.push({ at: `${file}:${name}`, what: (flags & ts.NodeFlags.Let) !== 0 ? 'let' : 'var' });
          continue;
        }
        const made = declaration.initializer === undefined ? undefined : constructedClass(declaration.initializer);
        if (made !== undefined && !IMMUTABLE_CONSTANTS.has(`${file}:${name}`)) findings.push({ at: `${file}:${name}`, what: `const = new ${made}` });
      }
    }
    if (ts.isClassDeclaration(statement)) {
      for (const member of statement.members) {
        if (!ts.isPropertyDeclaration(member)) continue;
        const modifiers = ts.getModifiers(member) ?? [];
        if (!modifiers.some((modifier) => modifier.kind === ts.SyntaxKind.StaticKeyword)) continue;
        const isReadonly = modifiers.some((modifier) => modifier.kind === ts.SyntaxKind.ReadonlyKeyword);
        const made = member.initializer === undefined ? undefined : constructedClass(member.initializer);
        if (!isReadonly || made !== undefined) {
          findings.push({ at: `${file}:${statement.name?.text ?? 'class'}.${member.name.getText(tree)}`, what: isReadonly ? `static = new ${made ?? ''}` : 'static field' });
        }
      }
    }
  }
  return findings;
}

/** The class a `new` expression makes (through `as`, `satisfies` and parentheses), else undefined. */
function constructedClass(expression: ts.Expression): string | undefined {
  let inner: ts.Expression = expression;
  while (ts.isAsExpression(inner) || ts.isSatisfiesExpression(inner) || ts.isParenthesizedExpression(inner)) inner = inner.expression;
  return ts.isNewExpression(inner) ? inner.expression.getText() : undefined;
}

function parse(file: string, source: string): ts.SourceFile {
  return ts.createSourceFile(file, source, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

describe('module state in src/', () => {
  it('finds what it must: let, var, caches and instances made at module level, mutable statics', () => {
    const source = [
      'let cached: string | undefined;',
      'var legacy = 1;',
      'const cache = new Map<string, number>();',
      'export const DEFAULT_GROUPS = new ProcessGroups() as ProcessGroups;',
      'const TABLE: readonly string[] = ["a"];',
      'class Registry { static instances = 0; static readonly NAME = "x"; static readonly all = new Set(); }',
      'function f() { let local = 1; const inner = new Map(); return [local, inner]; }',
    ].join('\n');
    expect(moduleState('sample.ts', source)).toEqual([
      { at: 'sample.ts:cached', what: 'let' },
      { at: 'sample.ts:legacy', what: 'var' },
      { at: 'sample.ts:cache', what: 'const = new Map' },
      { at: 'sample.ts:DEFAULT_GROUPS', what: 'const = new ProcessGroups' },
      { at: 'sample.ts:Registry.instances', what: 'static field' },
      { at: 'sample.ts:Registry.all', what: 'static = new Set' },
    ]);
  });

  it('has none but the named shared state: per-host state lives in the objects a host builds', () => {
    const files = sourceFiles(SRC_DIR);
    expect(files.length).toBeGreaterThan(200);
    const findings = files.flatMap((path) => moduleState(relative(SRC_DIR, path), readFileSync(path, 'utf8')));
    expect(findings.filter((finding) => !SHARED_STATE.has(finding.at)).map((finding) => `${finding.at}: ${finding.what}`)).toEqual([]);
  });

  it('allows only constants that still exist (a stale entry would hide a new binding of that name)', () => {
    const declared = new Set(
      sourceFiles(SRC_DIR).flatMap((path) => {
        const file = relative(SRC_DIR, path);
        const tree = parse(file, readFileSync(path, 'utf8'));
        return tree.statements
          .filter(ts.isVariableStatement)
          .flatMap((statement) => statement.declarationList.declarations.map((declaration) => `${file}:${declaration.name.getText(tree)}`));
      }),
    );
    expect([...IMMUTABLE_CONSTANTS.keys(), ...SHARED_STATE.keys()].filter((key) => !declared.has(key))).toEqual([]);
  });
});
