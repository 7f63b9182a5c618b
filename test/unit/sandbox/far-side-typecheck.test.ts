// The far side (sandbox/*.mjs: isolate processes, worker threads, the spawner)
// is plain ESM, so nothing but a checkJs program holds it to the message shapes
// of src/runner/wire.ts. This pins that the project's normal check is such a
// program, that it covers every sandbox file and reaches wire.ts, that it is
// clean, and that it does refuse a message wire.ts does not allow.
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');
const CONFIG = resolve(ROOT, 'tsconfig.sandbox.json');

function parsedConfig(): ts.ParsedCommandLine {
  const parsed = ts.getParsedCommandLineOfConfigFile(CONFIG, {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    },
  });
  if (parsed === undefined) throw new Error('tsconfig.sandbox.json did not parse');
  return parsed;
}

function sandboxFiles(ending: string): string[] {
  const files = readdirSync(resolve(ROOT, 'sandbox'))
    .filter((name) => name.endsWith(ending) && (ending !== '.mjs' || !name.endsWith('.d.mjs')))
    .map((name) => resolve(ROOT, 'sandbox', name));
  expect(files.length).toBeGreaterThan(3);
  return files;
}

function describeDiagnostics(diagnostics: readonly ts.Diagnostic[]): string[] {
  return diagnostics.map((diagnostic) => {
    const where = diagnostic.file === undefined ? '' : `${diagnostic.file.fileName.replace(`${ROOT}/`, '')}: `;
    return `${where}TS${diagnostic.code} ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`;
  });
}

describe('the far side type-checks against wire.ts', () => {
  it('is part of the normal check: npm test and npm run typecheck run tsconfig.sandbox.json', () => {
    const scripts = (JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.test).toContain('tsc -p tsconfig.sandbox.json');
    expect(scripts.typecheck).toContain('tsc -p tsconfig.sandbox.json');
  });

  it('checks every sandbox .mjs as JavaScript, with no emit', () => {
    const parsed = parsedConfig();
    expect(parsed.errors).toEqual([]);
    expect(parsed.options).toMatchObject({ allowJs: true, checkJs: true, noEmit: true, strict: true });
    // Only the .mjs are roots: a root .d.mts would hide its .mjs from the check (TypeScript
    // drops a JS root whose declaration file is also a root); the .d.mts come in through imports.
    expect(new Set(parsed.fileNames)).toEqual(new Set(sandboxFiles('.mjs')));
  });

  it('is clean, reaches wire.ts and every .d.mts, and refuses a log message whose level wire.ts does not allow', { timeout: 120_000 }, () => {
    const parsed = parsedConfig();
    const program = ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options });
    expect(describeDiagnostics(ts.getPreEmitDiagnostics(program))).toEqual([]);
    const checked = new Set(program.getSourceFiles().map((file) => file.fileName));
    for (const file of [...sandboxFiles('.mjs'), ...sandboxFiles('.d.mts'), resolve(ROOT, 'src/runner/wire.ts')]) expect(checked).toContain(file);

    // A far-side file that sends a level outside ToolLogLevel (the shape of the bug
    // the audit found in isolate-process.mjs): the same program must reject it.
    const probe = resolve(ROOT, 'sandbox/__wire-probe__.mjs');
    const probeText = [
      "/** @typedef {import('../src/runner/wire.js').IsolateToHostMessage} IsolateToHostMessage */",
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
    host.getSourceFile = (name, language, ...rest) =>
      name === probe ? ts.createSourceFile(name, probeText, language, true) : getSourceFile(name, language, ...rest);
    const probed = ts.createProgram({ rootNames: [...parsed.fileNames, probe], options: parsed.options, host, oldProgram: program });
    const probeFile = probed.getSourceFile(probe);
    expect(probeFile).toBeDefined();
    const codes = ts.getPreEmitDiagnostics(probed, probeFile).map((diagnostic) => diagnostic.code);
    expect(codes).toContain(2322);
  });
});
