// OpenTelemetry for `serve --otel` (SPEC section 6.2), imported only when
// telemetry is on. A span per tools/call following the MCP semantic
// conventions, child spans for the policy decision, approval, journal and run
// stages, the caller's `traceparent` (request `_meta`) as parent, and the
// `mcp.server.operation.duration` histogram. Attributes carry names, ids,
// versions and codes only: no argument or result content is exported.
// Providers are this host's own (not registered globally): two hosts in one
// process export apart.
import { context, SpanKind, SpanStatusCode, trace, TraceFlags, type Context, type Histogram, type Span, type Tracer } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { MeterProvider, PeriodicExportingMetricReader, type IMetricReader } from '@opentelemetry/sdk-metrics';
import type { Logger } from '../log.js';
import type { CallSpan, CallSpanInfo, Telemetry } from './telemetry.js';

/** The stages that get a child span. The others are cheap checks, covered by the call span. */
const TRACED_STAGES: ReadonlySet<string> = new Set(['policy', 'approval', 'journal', 'run']);

export const DURATION_METRIC = 'mcp.server.operation.duration';

interface OtelOptions {
  readonly serviceVersion: string;
  readonly logger: Logger;
  /** Default: OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT (or http://localhost:4318), batched. */
  readonly spanProcessor?: SpanProcessor;
  /** Default: OTLP/HTTP metrics, exported periodically. */
  readonly metricReader?: IMetricReader;
}

/** Starts the providers and exporters; the Telemetry the protocol layer uses. */
export async function startOtelTelemetry(options: OtelOptions): Promise<Telemetry> {
  const resource = resourceFromAttributes({ 'service.name': process.env['OTEL_SERVICE_NAME'] ?? 'toolhost', 'service.version': options.serviceVersion });
  const spanProcessor = options.spanProcessor ?? new BatchSpanProcessor(await defaultSpanExporter());
  const tracerProvider = new BasicTracerProvider({ resource, spanProcessors: [spanProcessor] });
  const meterProvider = new MeterProvider({ resource, readers: [options.metricReader ?? (await defaultMetricReader())] });
  const tracer = tracerProvider.getTracer('toolhost', options.serviceVersion);
  const duration = meterProvider.getMeter('toolhost', options.serviceVersion).createHistogram(DURATION_METRIC, {
    description: 'Duration of MCP requests handled by the server',
    unit: 's',
  });
  options.logger.info({ endpoint: process.env['OTEL_EXPORTER_OTLP_ENDPOINT'] ?? 'default' }, 'OpenTelemetry on: a span per tool call');
  return {
    startCall: (info) => startCallSpan(tracer, duration, info),
    async shutdown() {
      await Promise.allSettled([tracerProvider.shutdown(), meterProvider.shutdown()]);
    },
  };
}

function startCallSpan(tracer: Tracer, duration: Histogram, info: CallSpanInfo): CallSpan {
  const startedAt = performance.now();
  const parent = parentContextOf(info.meta);
  const attributes = {
    'mcp.method.name': 'tools/call',
    'gen_ai.tool.name': info.tool,
    'gen_ai.operation.name': 'execute_tool',
    'jsonrpc.request.id': String(info.requestId),
    ...(info.protocolVersion !== undefined ? { 'mcp.protocol.version': info.protocolVersion } : {}),
  };
  const span = tracer.startSpan(`tools/call ${info.tool}`, { kind: SpanKind.SERVER, attributes }, parent);
  const callContext = trace.setSpan(parent, span);
  let stageSpan: Span | undefined;
  let ended = false;
  const endStage = (): void => {
    stageSpan?.end();
    stageSpan = undefined;
  };
  return {
    enterStage(stage) {
      if (ended) return;
      endStage();
      if (TRACED_STAGES.has(stage)) stageSpan = tracer.startSpan(`toolhost.${stage}`, { attributes: { 'toolhost.stage': stage } }, callContext);
    },
    end(errorType) {
      if (ended) return;
      ended = true;
      if (errorType !== undefined) {
        stageSpan?.setStatus({ code: SpanStatusCode.ERROR });
        span.setAttribute('error.type', errorType);
        span.setStatus({ code: SpanStatusCode.ERROR, message: errorType });
      }
      endStage();
      span.end();
      const { 'jsonrpc.request.id': _id, ...metricAttributes } = attributes;
      duration.record((performance.now() - startedAt) / 1000, { ...metricAttributes, ...(errorType !== undefined ? { 'error.type': errorType } : {}) });
    },
  };
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The caller's span from `_meta.traceparent` (W3C Trace Context); the root context when absent or malformed. */
function parentContextOf(meta: Readonly<Record<string, unknown>>): Context {
  const value = meta['traceparent'];
  const match = typeof value === 'string' ? TRACEPARENT.exec(value.trim()) : null;
  if (!match) return context.active();
  const [, traceId, spanId, flags] = match as unknown as [string, string, string, string];
  // All-zero ids are invalid by the spec: no parent rather than a broken one.
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return context.active();
  return trace.setSpanContext(context.active(), {
    traceId,
    spanId,
    traceFlags: Number.parseInt(flags, 16) & TraceFlags.SAMPLED,
    isRemote: true,
  });
}

async function defaultSpanExporter(): Promise<SpanExporter> {
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
  return new OTLPTraceExporter();
}

async function defaultMetricReader(): Promise<IMetricReader> {
  const { OTLPMetricExporter } = await import('@opentelemetry/exporter-metrics-otlp-http');
  return new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter() });
}
