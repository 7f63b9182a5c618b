// The far side (sandbox/**/*.mjs: isolate processes, worker threads) and the
// host's helper processes (src/runner/host-helpers/*.mjs: the spawner) are plain
// ESM, so nothing but a checkJs program holds them to the message shapes of
// sandbox/shared/messages.d.mts. This pins that the project's normal check is
// such a program, that it covers every such file and reaches the message
// shapes, that it is clean, and that it does refuse a message they do not allow.
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');
const CONFIG = resolve(ROOT, 'tsconfig.sandbox.json');

function parsedConfig(): ts.ParsedCommandLine {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    CONFIG,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    },
  );
  if (parsed === undefined) throw new Error('tsconfig.sandbox.json did not parse');
  return parsed;
}

const PLAIN_ESM_DIRS = ['sandbox', 'src/runner/host-helpers'];

function sandboxFiles(ending: string): string[] {
  const files = PLAIN_ESM_DIRS.flatMap((dir) =>
    readdirSync(resolve(ROOT, dir), { recursive: true, encoding: 'utf8' })
      .filter((name) => name.endsWith(ending) && (ending !== '.mjs' || !name.endsWith('.d.mjs')))
      .map((name) => resolve(ROOT, dir, name)),
  );
  expect(files.length).toBeGreaterThan(3);
  return files;
}

function describeDiagnostics(diagnostics: readonly ts.Diagnostic[]): string[] {
  return diagnostics.map((diagnostic) => {
    const where = diagnostic.file === undefined ? '' : `${diagnostic.file.fileName.replace(`${ROOT}/`, '')}: `;
    return `${where}TS${diagnostic.code} ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`;
  });
}

describe('the far side type-checks against its message shapes', () => {
  it('is part of the normal check: npm test and npm run typecheck run tsconfig.sandbox.json', () => {
    const scripts = (JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.test).toContain('tsc -p tsconfig.sandbox.json');
    expect(scripts.typecheck).toContain('tsc -p tsconfig.sandbox.json');
  });

  it('checks every sandbox and host-helper .mjs as JavaScript, with no emit', () => {
    const parsed = parsedConfig();
    expect(parsed.errors).toEqual([]);
    expect(parsed.options).toMatchObject({ allowJs: true, checkJs: true, noEmit: true, strict: true });
    // Only the .mjs are roots: a root .d.mts would hide its .mjs from the check (TypeScript
    // drops a JS root whose declaration file is also a root); the .d.mts come in through imports.
    expect(new Set(parsed.fileNames)).toEqual(new Set(sandboxFiles('.mjs')));
  });

  it('is clean, reaches every .d.mts, and refuses a log message whose level the message shapes do not allow', { timeout: 120_000 }, () => {
    const parsed = parsedConfig();
    const program = ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options });
    expect(describeDiagnostics(ts.getPreEmitDiagnostics(program))).toEqual([]);
    const checked = new Set(program.getSourceFiles().map((file) => file.fileName));
    for (const file of [...sandboxFiles('.mjs'), ...sandboxFiles('.d.mts')]) expect(checked).toContain(file);

    // A far-side file that sends a level outside ToolLogLevel (the shape of the bug
    // once found in isolate-process.mjs): the same program must reject it.
    const probe = resolve(ROOT, 'sandbox/isolate/__wire-probe__.mjs');
    const probeText = [
      "/** @typedef {import('../shared/messages.mjs').IsolateToHostMessage} IsolateToHostMessage */",
      '/** @type {IsolateToHostMessage} */',
      "export const message = { type: 'log', id: 1, level: 'loud', message: 'x' };",
      '',
    ].join('\n');
    const host = ts.createCompilerHost(parsed.options);
    const readFile = host.readFile.bind(host);
    const fileExists = host.fileExists.bind(host);
    const getSourceFile = host.getSourceFile.bind(host);
    host.readFile = (name) => (name === probe ? probeText : readFile(name));
    host.fileExists = (name) => name === probe || fileExists(name);
    host.getSourceFile = (name, language, ...rest) => (name === probe ? ts.createSourceFile(name, probeText, language, true) : getSourceFile(name, language, ...rest));
    const probed = ts.createProgram({ rootNames: [...parsed.fileNames, probe], options: parsed.options, host, oldProgram: program });
    const probeFile = probed.getSourceFile(probe);
    expect(probeFile).toBeDefined();
    const codes = ts.getPreEmitDiagnostics(probed, probeFile).map((diagnostic) => diagnostic.code);
    expect(codes).toContain(2322);
  });
});
