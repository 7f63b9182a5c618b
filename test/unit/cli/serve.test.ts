// When `serve` starts its early stdio front (serve.ts): only when nothing can
// make the run an HTTP server, judged before anything parses the command line
// or toolhost.yaml. A project `toolhost init` writes (its http: section commented
// out) gets the early front; a toolhost.yaml with an http: section does not.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isStdioCertain } from '../../../src/cli/serve.js';
import { projectFiles } from '../../../src/cli/scaffold.js';
import { makeTempDir, type TempDir } from '../../helpers/temp-dir.js';

let temp: TempDir | undefined;
afterEach(() => {
  temp?.remove();
  temp = undefined;
});

function projectWith(toolhostYaml: string | undefined): string {
  temp = makeTempDir('toolhost-serve-front-');
  const dir = join(temp.path, 'project');
  mkdirSync(join(dir, 'sub'), { recursive: true });
  if (toolhostYaml !== undefined) writeFileSync(join(dir, 'toolhost.yaml'), toolhostYaml);
  return dir;
}

const INIT_YAML = projectFiles('/p', { command: 'node', args: [] }).find((file) => file.path === 'toolhost.yaml')!.text;

describe('isStdioCertain', () => {
  it('with no toolhost.yaml: stdio, unless --http, --console or --help', () => {
    const dir = projectWith(undefined);
    expect(isStdioCertain(['--manifests', 'm'], dir)).toBe(true);
    for (const flag of [['--http', '127.0.0.1:8080'], ['--http=127.0.0.1:8080'], ['--console'], ['--help'], ['-h']]) {
      expect(isStdioCertain(flag, dir)).toBe(false);
    }
  });

  it('with the toolhost.yaml toolhost init writes (http: commented out), found from a subfolder or named: stdio', () => {
    expect(INIT_YAML).toMatch(/^# http:/m);
    const dir = projectWith(INIT_YAML);
    expect(isStdioCertain([], join(dir, 'sub'))).toBe(true);
    expect(isStdioCertain(['--config', join(dir, 'toolhost.yaml')], '/')).toBe(true);
  });

  it('with an http: section, in any spelling: left to the full parse, unless --stdio', () => {
    for (const yaml of ['http:\n  listen: 127.0.0.1:8080\n', '"http" : {listen: 127.0.0.1:8080}\n', "{'http': {listen: x}}\n", 'manifests: [m] # note\nhttp: {listen: x}\n']) {
      const dir = projectWith(yaml);
      expect(isStdioCertain([], dir)).toBe(false);
      expect(isStdioCertain(['--stdio'], dir)).toBe(true);
      temp?.remove();
    }
  });

  it('a named toolhost.yaml that cannot be read is left to the full parse', () => {
    const dir = projectWith(undefined);
    expect(isStdioCertain(['--config=missing.yaml'], dir)).toBe(false);
  });
});
