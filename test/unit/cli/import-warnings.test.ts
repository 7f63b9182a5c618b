// What `toolhost import` warns about (import-warnings.ts): launchers that
// download at start, and a server refused a write beside its own code.
import { describe, expect, it } from 'vitest';
import { networkStartWarning, ownFolderWriteWarning } from '../../../src/cli/import-warnings.js';

describe('networkStartWarning', () => {
  it.each([
    [['npx', '-y', '@modelcontextprotocol/server-memory']],
    [['/usr/bin/npx', 'pkg']],
    [['uvx', 'mcp-server-fetch']],
    [['pnpm', 'dlx', 'pkg']],
    [['npm', 'exec', 'pkg']],
    [['docker', 'run', '-i', 'mcp/fetch']],
  ])('warns for %j', (command) => {
    expect(networkStartWarning(command)).toMatch(/^warning: .* downloads its package when it starts/);
  });

  it.each([[['node', './node_modules/pkg/dist/index.js']], [['python3', '-m', 'server']], [['npm', 'start']], [['uv', 'run', 'server.py']]])('does not warn for %j', (command) => {
    expect(networkStartWarning(command)).toBeUndefined();
  });
});

describe('ownFolderWriteWarning', () => {
  const folders = ['/p/servers', '/p/servers/node_modules'];
  it('warns when a write was refused in the manifest folder or its node_modules', () => {
    expect(ownFolderWriteWarning(["Error: EROFS: read-only file system, open '/p/servers/node_modules/pkg/dist/memory.jsonl'"], folders)).toMatch(/EROFS.*MEMORY_FILE_PATH/s);
    expect(ownFolderWriteWarning(["EACCES: permission denied, mkdir '/p/servers/data'"], folders)).toMatch(/^warning: .*\(EACCES\)/);
  });

  it('does not warn for a refusal elsewhere, or for other errors in the folder', () => {
    expect(ownFolderWriteWarning(["EROFS: read-only file system, open '/p/workspace/x'"], folders)).toBeUndefined();
    expect(ownFolderWriteWarning(["ENOENT: no such file, open '/p/servers/x'"], folders)).toBeUndefined();
  });
});
