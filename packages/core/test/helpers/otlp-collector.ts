import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
// OpenTelemetry's protobufjs root for the OTLP messages (opentelemetry-proto), generated and shipped by this version of the package.
import root from '@opentelemetry/otlp-transformer/build/src/generated/root.js';

/** A span as the collector received it: ids in hex, times in ns (strings), attributes as plain values. */
export interface CollectedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly traceState: string;
  readonly name: string;
  readonly kind: number;
  readonly startTimeUnixNano: string;
  readonly endTimeUnixNano: string;
  readonly attributes: Record<string, unknown>;
  readonly events: { name: string; timeUnixNano: string }[];
  readonly status: { code?: number; message?: string };
  /** The resource and instrumentation scope it came with. */
  readonly resource: Record<string, unknown>;
  readonly scope: string;
}

/** A real OTLP/HTTP receiver on 127.0.0.1: decodes each protobuf ExportTraceServiceRequest and keeps its spans. */
export interface OtlpCollector {
  /** `http://127.0.0.1:<port>/v1/traces` */
  readonly url: string;
  readonly spans: CollectedSpan[];
  /** The content types of the requests received. */
  readonly contentTypes: string[];
  close(): Promise<void>;
}

type Message = Record<string, unknown>;
type KeyValue = { key: string; value: Record<string, unknown> };

interface MessageType {
  decode(bytes: Uint8Array): Message;
  toObject(message: Message, options: object): Message;
}
const ExportTraceServiceRequest = (root as unknown as { opentelemetry: { proto: { collector: { trace: { v1: { ExportTraceServiceRequest: MessageType } } } } } }).opentelemetry.proto.collector.trace.v1
  .ExportTraceServiceRequest;

function plain(attributes: KeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((attributes ?? []).map(({ key, value }) => [key, Object.values(value)[0]]));
}

export async function startOtlpCollector(): Promise<OtlpCollector> {
  const spans: CollectedSpan[] = [];
  const contentTypes: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.url !== '/v1/traces' || req.method !== 'POST') {
        res.writeHead(404).end();
        return;
      }
      contentTypes.push(String(req.headers['content-type']));
      const request = ExportTraceServiceRequest.toObject(ExportTraceServiceRequest.decode(Buffer.concat(chunks)), { longs: String, bytes: String, enums: Number, defaults: true }) as {
        resourceSpans: { resource: { attributes: KeyValue[] }; scopeSpans: { scope: { name: string }; spans: Message[] }[] }[];
      };
      const hex = (base64: unknown) => Buffer.from(String(base64), 'base64').toString('hex');
      for (const { resource, scopeSpans } of request.resourceSpans) {
        for (const { scope, spans: scoped } of scopeSpans) {
          for (const span of scoped) {
            spans.push({
              traceId: hex(span.traceId),
              spanId: hex(span.spanId),
              parentSpanId: hex(span.parentSpanId),
              traceState: String(span.traceState),
              name: String(span.name),
              kind: Number(span.kind),
              startTimeUnixNano: String(span.startTimeUnixNano),
              endTimeUnixNano: String(span.endTimeUnixNano),
              attributes: plain(span.attributes as KeyValue[]),
              events: (span.events as { name: string; timeUnixNano: string }[]).map(({ name, timeUnixNano }) => ({ name, timeUnixNano })),
              status: span.status as CollectedSpan['status'],
              resource: plain(resource.attributes),
              scope: scope.name,
            });
          }
        }
      }
      // An empty ExportTraceServiceResponse: everything accepted.
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    spans,
    contentTypes,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
