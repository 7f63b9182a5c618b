// Telemetry is free when off (SPEC section 6.2): the OpenTelemetry SDK and
// exporters are reachable only through src/telemetry/otel.ts, and that module
// only through a dynamic import (taken when --otel or OTEL_EXPORTER_OTLP_ENDPOINT
// asks for it). A static import anywhere else would load the SDK into every host.
import { describe, expect, it } from 'vitest';
import { importsOf, sourceFiles, type SourceFile } from '../../helpers/source-imports.js';

const SOURCES = sourceFiles('src');

// What a file loads with it: `import … from 'x'` and `export … from 'x'`, not `import type`, not `import('x')`.
function staticImports(source: SourceFile): string[] {
  return importsOf(source)
    .filter((entry) => !entry.typeOnly && !entry.dynamic)
    .map((entry) => entry.specifier);
}

describe('telemetry off loads no OpenTelemetry code', () => {
  it('only src/telemetry/otel.ts imports @opentelemetry packages at load time', () => {
    const importers = SOURCES.filter((source) => staticImports(source).some((specifier) => specifier.startsWith('@opentelemetry/'))).map(({ file }) => file);
    expect(importers).toEqual(['src/telemetry/otel.ts']);
  });

  it('nothing imports otel.ts statically; serve reaches it by a dynamic import', () => {
    expect(SOURCES.filter((source) => staticImports(source).some((specifier) => specifier.endsWith('/otel.js'))).map(({ file }) => file)).toEqual([]);
    const serve = SOURCES.find(({ file }) => file === 'src/cli/serve-host.ts')!;
    expect(serve.text).toContain("await import('../telemetry/otel.js')");
  });
});
