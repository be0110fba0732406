/**
 * OpenTelemetry for the examples' server and worker processes: with
 * `OTEL_EXPORTER_OTLP_ENDPOINT` set, spans go over OTLP/HTTP (JSON) to that collector, under a
 * service name that says which process sent them (`OTEL_SERVICE_NAME` overrides it). The
 * framework itself only uses `@opentelemetry/api`; these few lines are what an app adds.
 */
export async function startTracing(serviceName: string): Promise<void> {
  if (!process.env.OTEL_EXPORTER_OTLP_ENDPOINT && !process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return;
  const protocol = process.env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? process.env.OTEL_EXPORTER_OTLP_PROTOCOL;
  if (protocol !== undefined && protocol !== 'http/json') {
    process.stderr.write(`OTEL_EXPORTER_OTLP_PROTOCOL=${protocol}: the examples export http/json only\n`);
  }
  const [{ NodeTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }] =
    await Promise.all([
      import('@opentelemetry/sdk-trace-node'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
    ]);
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': process.env.OTEL_SERVICE_NAME ?? serviceName }),
    // The exporter reads the endpoint, headers and timeout from the standard OTEL_* variables.
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter(), {
        ...(process.env.OTEL_BSP_SCHEDULE_DELAY && {
          scheduledDelayMillis: Number(process.env.OTEL_BSP_SCHEDULE_DELAY),
        }),
      }),
    ],
  });
  provider.register();
  // Spans still in the batch go out before the process exits.
  process.once('beforeExit', () => void provider.shutdown());
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.prependOnceListener(signal, () => void provider.forceFlush());
  }
}
