import { InferenceError } from '../errors.js';
import { isModuleNotFound } from '../repository/missing-package.js';

/** The parts of the OpenTelemetry JS SDK that OpenTelemetry mode uses. */
export interface OpenTelemetrySdk {
  readonly api: typeof import('@opentelemetry/api');
  readonly tracing: typeof import('@opentelemetry/sdk-trace');
  readonly resources: typeof import('@opentelemetry/resources');
  readonly exporter: typeof import('@opentelemetry/exporter-trace-otlp-proto');
}

/** How the SDK is loaded: dynamic imports, or in a test a stand-in that fails as a missing package does. */
export type ImportOpenTelemetrySdk = () => Promise<OpenTelemetrySdk>;

const OPEN_TELEMETRY_PACKAGES = ['@opentelemetry/api@~1.9', '@opentelemetry/sdk-trace@^2.12', '@opentelemetry/resources@^2.12', '@opentelemetry/exporter-trace-otlp-proto@^0.223'];

const importSdk: ImportOpenTelemetrySdk = async () => {
  const [api, tracing, resources, exporter] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/exporter-trace-otlp-proto'),
  ]);
  return { api, tracing, resources, exporter };
};

/**
 * The SDK, when ServerOptions.trace asks for mode 'opentelemetry'; nothing otherwise. The
 * packages are optional peer dependencies of core, loaded only here, so a server in Triton
 * mode (or with tracing off) neither needs them nor pays for loading them.
 */
export async function openTelemetrySdkFor(trace: unknown, load: ImportOpenTelemetrySdk = importSdk): Promise<OpenTelemetrySdk | undefined> {
  if ((trace as { trace_mode?: unknown } | undefined)?.trace_mode !== 'opentelemetry') return undefined;
  try {
    return await load();
  } catch (error) {
    const missing = /'(@opentelemetry\/[^'/]+)'/.exec(String((error as Error | undefined)?.message))?.[1];
    if (isModuleNotFound(error) && missing) {
      throw new InferenceError('UNAVAILABLE', `trace mode 'opentelemetry' needs the OpenTelemetry JS SDK, and ${missing} is not installed: npm install ${OPEN_TELEMETRY_PACKAGES.join(' ')}`, { cause: error });
    }
    throw new InferenceError('UNAVAILABLE', `trace mode 'opentelemetry': loading the OpenTelemetry JS SDK failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}
