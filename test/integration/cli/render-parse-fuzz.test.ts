// The built CLI's render, parse and fuzz commands, spawned as a user runs them.
import { mkdtempSync, rmSync, writeFileSync, mkdirSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { execa } from 'execa';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BIN = fileURLToPath(new URL('../../../bin/toolhost.js', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'toolhost-cli-formats-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function toolhost(args: string[], options: { cwd?: string; input?: string } = {}) {
  const result = await execa(BIN, args, { cwd: options.cwd ?? ROOT, reject: false, timeout: 60_000, ...(options.input === undefined ? {} : { input: options.input }) });
  return { code: result.exitCode, stdout: String(result.stdout), stderr: String(result.stderr) };
}

describe('toolhost render', () => {
  it('renders p-type signatures of the listed tools', async () => {
    const { code, stdout } = await toolhost(['render', '--format', 'ptype']);
    expect(code).toBe(0);
    expect(stdout).toContain('read_file(path: string, startLine?: integer, maxLines?: integer)');
  });
  it('renders JSON function declarations', async () => {
    const { code, stdout } = await toolhost(['render']);
    expect(code).toBe(0);
    const names = (JSON.parse(stdout) as Array<{ function: { name: string } }>).map((entry) => entry.function.name);
    expect(names).toContain('search_text');
  });
  it('marks the terminal tool (finish) in all three formats, and only it', async () => {
    const json = JSON.parse((await toolhost(['render', '--format', 'json'])).stdout) as Array<{ function: { name: string; description: string }; terminal?: boolean }>;
    expect(json.filter((entry) => entry.terminal === true).map((entry) => entry.function.name)).toEqual(['finish']);
    expect(json.find((entry) => entry.function.name === 'finish')?.function.description).toContain('Terminal: a successful call ends the run');
    const xml = (await toolhost(['render', '--format', 'xml'])).stdout;
    expect(xml.match(/<tool name="[a-z_]+" terminal="true">/g)).toEqual(['<tool name="finish" terminal="true">']);
    const ptype = (await toolhost(['render', '--format', 'ptype'])).stdout.split('\n');
    expect(ptype.filter((line) => line.includes(' -> terminal '))).toEqual([
      expect.stringMatching(/^finish\(summary: string, outcome\?: .*\) -> terminal  # .*Terminal: a successful call ends the run/),
    ]);
  });
  it('refuses an unknown format with exit 2', async () => {
    const { code, stderr } = await toolhost(['render', '--format', 'yaml']);
    expect(code).toBe(2);
    expect(stderr).toContain('--format must be one of json, xml, ptype');
  });
});

describe('toolhost parse', () => {
  it('parses an XML call with coercion and checks it', async () => {
    const { code, stdout } = await toolhost(['parse', '<read_file><path>README.md</path><maxLines>3</maxLines></read_file>']);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ name: 'read_file', arguments: { path: 'README.md', maxLines: 3 } });
  });
  it('reads the emission from stdin with -', async () => {
    const { code, stdout } = await toolhost(['parse', '-'], { input: 'list_dir(path="src", depth=1)' });
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ name: 'list_dir', arguments: { path: 'src', depth: 1 } });
  });
  it('refuses malformed emissions with exit 1', async () => {
    const unclosed = await toolhost(['parse', '<read_file><path>x</path>']);
    expect(unclosed.code).toBe(1);
    expect(unclosed.stderr).toContain('code: malformed_request');
  });
  it('applies the input schema to a parsed call', async () => {
    const { code, stderr } = await toolhost(['parse', 'read_file(path="x", maxLines=-5)']);
    expect(code).toBe(1);
    expect(stderr).toContain('code: invalid_arguments');
    expect(stderr).toContain('path: /maxLines');
  });
});

describe('toolhost fuzz', () => {
  it('passes over a bundled tool and reports as JSON', async () => {
    const { code, stdout } = await toolhost(['fuzz', 'json_format', '--count', '5', '--json']);
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as { valid: { total: number; reached: number }; invalid: { total: number; refused: number }; failures: unknown[] };
    expect(report.valid).toEqual({ total: 5, reached: 5 });
    expect(report.invalid.refused).toBe(report.invalid.total);
    expect(report.failures).toEqual([]);
  });
  it('fails (exit 1) when valid arguments cannot reach the tool', async () => {
    // A workspace whose repository policy denies the tool: its valid cases stop at policy_denied.
    const workspace = join(scratch, 'denying');
    mkdirSync(join(workspace, 'policies'), { recursive: true });
    cpSync(join(ROOT, 'manifests'), join(workspace, 'manifests'), { recursive: true });
    writeFileSync(join(workspace, 'policies', 'deny.yaml'), 'kind: Policy\nname: deny-json\ntools:\n  deny: ["json_format"]\n');
    const { code, stdout } = await toolhost(['fuzz', 'json_format', '--count', '3', '--json', '--workspace', workspace, '--manifests', join(workspace, 'manifests')]);
    expect(code).toBe(1);
    const report = JSON.parse(stdout) as { failures: Array<{ kind: string; outcome: string }> };
    expect(report.failures.filter((failure) => failure.kind === 'valid').map((failure) => failure.outcome)).toEqual(['policy_denied', 'policy_denied', 'policy_denied']);
  });
});
