// Whether `serve` traces (src/telemetry/tracing.ts): an OTLP endpoint is configured and the SDK is not disabled.
// Reads the environment only, so that with tracing off no OpenTelemetry module is ever loaded.

export function tracingEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  return Boolean(endpoint) && env.OTEL_SDK_DISABLED?.trim().toLowerCase() !== 'true';
}
