// Telemetry is free when off (SPEC section 6.2): the OpenTelemetry SDK and
// exporters are reachable only through src/telemetry/otel.ts, and that module
// only through a dynamic import (taken when --otel or OTEL_EXPORTER_OTLP_ENDPOINT
// asks for it). A static import anywhere else would load the SDK into every host.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../helpers/mcp-clients.js';

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

const SOURCES = sourceFiles(join(REPO_ROOT, 'src')).map((file) => ({ file: relative(REPO_ROOT, file), text: readFileSync(file, 'utf8') }));
// `import … from 'x'` and `export … from 'x'`, not `import type`, not `import('x')`.
const STATIC_IMPORT = /^\s*(?:import|export)\s+(?!type\b)[^;]*?\bfrom\s+['"]([^'"]+)['"]/gm;

function staticImports(text: string): string[] {
  return [...text.matchAll(STATIC_IMPORT)].map((match) => match[1]!);
}

describe('telemetry off loads no OpenTelemetry code', () => {
  it('only src/telemetry/otel.ts imports @opentelemetry packages at load time', () => {
    const importers = SOURCES.filter(({ text }) => staticImports(text).some((specifier) => specifier.startsWith('@opentelemetry/'))).map(({ file }) => file);
    expect(importers).toEqual(['src/telemetry/otel.ts']);
  });

  it('nothing imports otel.ts statically; serve reaches it by a dynamic import', () => {
    expect(SOURCES.filter(({ text }) => staticImports(text).some((specifier) => specifier.endsWith('/otel.js'))).map(({ file }) => file)).toEqual([]);
    const serve = SOURCES.find(({ file }) => file === 'src/cli/serve.ts')!;
    expect(serve.text).toContain("await import('../telemetry/otel.js')");
  });
});
