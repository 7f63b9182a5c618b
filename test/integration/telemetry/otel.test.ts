// OpenTelemetry (SPEC section 6.2) end to end in one process: a real host, the
// HTTP front, real SDK clients in both eras, and the OpenTelemetry SDK's
// in-memory exporters. Each tools/call is a SERVER span named
// `tools/call <tool>` with the MCP semantic-convention attributes, its stages
// are child spans, a `traceparent` in `_meta` is the parent, errors carry
// `error.type` = the code, the duration histogram is recorded, and no argument
// or result content reaches an attribute.
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { MetricReader } from '@opentelemetry/sdk-metrics';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSilentLogger } from '../../../src/log.js';
import type { HttpServer } from '../../../src/protocol/http.js';
import { serveHostOverHttp } from '../../helpers/http-front.js';
import { DURATION_METRIC, startOtelTelemetry } from '../../../src/telemetry/otel.js';
import type { Telemetry } from '../../../src/telemetry/telemetry.js';
import { connectHttpClient, type TestClient } from '../../helpers/mcp-clients.js';
import { closeAllHosts, startHost, type TestHost } from '../../helpers/supervisor-host.js';

/** Collects on demand: the test reads the histogram when it wants to. */
class CollectingReader extends MetricReader {
  protected async onShutdown(): Promise<void> {}
  protected async onForceFlush(): Promise<void> {}
}

const PARENT_TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_SPAN_ID = '00f067aa0ba902b7';
const SECRET_ARGUMENT = 'argument-content-never-exported-7f3a';

let host: TestHost;
let http: HttpServer;
let telemetry: Telemetry;
const exporter = new InMemorySpanExporter();
const reader = new CollectingReader();
const clients: TestClient[] = [];

beforeAll(async () => {
  host = await startHost();
  telemetry = await startOtelTelemetry({ serviceVersion: 'test', logger: createSilentLogger(), spanProcessor: new SimpleSpanProcessor(exporter), metricReader: reader });
  http = await serveHostOverHttp(host, { telemetry });
});

afterAll(async () => {
  await Promise.allSettled(clients.map((client) => client.close()));
  await http?.close();
  await telemetry?.shutdown();
  await closeAllHosts();
});

beforeEach(() => exporter.reset());

async function client(kind: 'v1-legacy' | 'v2-modern'): Promise<TestClient> {
  const connected = await connectHttpClient(`${http.url}/mcp`, undefined, { kind });
  clients.push(connected);
  return connected;
}

function callSpans(): ReadableSpan[] {
  return exporter.getFinishedSpans().filter((span) => span.name.startsWith('tools/call '));
}

describe.each(['v1-legacy', 'v2-modern'] as const)('%s client', (kind) => {
  it('a call is a SERVER span with the MCP attributes, stage child spans, and the traceparent as parent', async () => {
    const mcp = await client(kind);
    const result = await mcp.callTool({
      name: 'echo',
      arguments: { value: SECRET_ARGUMENT },
      _meta: { traceparent: `00-${PARENT_TRACE_ID}-${PARENT_SPAN_ID}-01` },
    });
    expect(result['isError']).not.toBe(true);
    const [span, ...others] = callSpans();
    expect(others).toHaveLength(0);
    expect(span!.name).toBe('tools/call echo');
    expect(span!.kind).toBe(SpanKind.SERVER);
    expect(span!.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'echo',
      'gen_ai.operation.name': 'execute_tool',
      'mcp.protocol.version': kind === 'v2-modern' ? '2026-07-28' : expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
    });
    expect(typeof span!.attributes['jsonrpc.request.id']).toBe('string');
    expect(span!.attributes['error.type']).toBeUndefined();
    expect(span!.spanContext().traceId).toBe(PARENT_TRACE_ID);
    expect(span!.parentSpanContext?.spanId).toBe(PARENT_SPAN_ID);

    const children = exporter.getFinishedSpans().filter((child) => child.parentSpanContext?.spanId === span!.spanContext().spanId);
    expect(children.map((child) => child.name).sort()).toEqual(['toolhost.approval', 'toolhost.journal', 'toolhost.policy', 'toolhost.run']);
    expect(children.every((child) => child.spanContext().traceId === PARENT_TRACE_ID)).toBe(true);
    expect(JSON.stringify(exporter.getFinishedSpans().map((each) => each.attributes))).not.toContain(SECRET_ARGUMENT);
  });

  it('a failing call carries error.type = the code and an error status', async () => {
    const mcp = await client(kind);
    await mcp.callTool({ name: 'fail', arguments: { message: SECRET_ARGUMENT } });
    await mcp.callTool({ name: 'forbidden', arguments: {} });
    const [failed, denied] = callSpans();
    expect(failed!.attributes['error.type']).toBe('tool_error');
    expect(failed!.status.code).toBe(SpanStatusCode.ERROR);
    expect(denied!.attributes['error.type']).toBe('policy_denied');
    // Without a traceparent the call span is a root.
    expect(denied!.parentSpanContext).toBeUndefined();
    expect(JSON.stringify(exporter.getFinishedSpans().map((each) => [each.attributes, each.status]))).not.toContain(SECRET_ARGUMENT);
  });
});

describe('mcp.server.operation.duration', () => {
  it('is recorded per call in seconds, with the tool and the error type, never the request id', async () => {
    const { resourceMetrics } = await reader.collect();
    const metric = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).find((each) => each.descriptor.name === DURATION_METRIC);
    expect(metric?.descriptor.unit).toBe('s');
    const points = (metric?.dataPoints ?? []) as Array<{ attributes: Record<string, unknown>; value: { count: number } }>;
    // One point per attribute set: the two eras differ in mcp.protocol.version.
    const count = (match: (attributes: Record<string, unknown>) => boolean) => points.filter((point) => match(point.attributes)).reduce((sum, point) => sum + point.value.count, 0);
    expect(count((attributes) => attributes['gen_ai.tool.name'] === 'echo' && attributes['error.type'] === undefined)).toBe(2);
    expect(count((attributes) => attributes['error.type'] === 'tool_error')).toBe(2);
    expect(count((attributes) => attributes['error.type'] === 'policy_denied')).toBe(2);
    expect(points.every((point) => point.attributes['jsonrpc.request.id'] === undefined)).toBe(true);
  });
});
