/**
 * Network server: an application serves its models over Triton's HTTP/REST and gRPC
 * protocols and its metrics, then talks to itself as Triton's clients would (fetch with
 * JSON and with binary tensors, a gRPC ModelInfer, a metrics scrape). Free ports are
 * taken so that it runs anywhere; `tritium serve` does the same on 8000/8001/8002.
 * Run from the repository root: npx -y pnpm@10.34.9 example:network-server
 */
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { InferenceServer } from '@tritium/core';
import { onnxBackend } from '@tritium/backend-onnx';
import { protoDirectory, startGrpcFrontend, startHttpFrontend, startMetricsFrontend } from '@tritium/frontend';

// Triton's "simple" model: OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 - INPUT1.
const repository = await mkdtemp(join(tmpdir(), 'tritium-network-'));
await mkdir(join(repository, 'add_sub', '1'), { recursive: true });
await cp(fileURLToPath(new URL('../../packages/backend-onnx/models/add_sub.onnx', import.meta.url)), join(repository, 'add_sub', '1', 'model.onnx'));
await writeFile(
  join(repository, 'add_sub', 'config.pbtxt'),
  `platform: "onnxruntime_onnx"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 16 ] }, { name: "INPUT1" data_type: TYPE_FP32 dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 16 ] }, { name: "OUTPUT1" data_type: TYPE_FP32 dims: [ 16 ] } ]
`,
);

const server = await InferenceServer.start({ modelRepository: repository, backends: [onnxBackend()] });
const local = { host: '127.0.0.1', port: 0 };
const [http, grpcService, metrics] = await Promise.all([startHttpFrontend(server, local), startGrpcFrontend(server, local), startMetricsFrontend(server, local)]);
const base = `http://127.0.0.1:${http.port}`;
try {
  console.log(`ready: ${(await fetch(`${base}/v2/health/ready`)).status}`);

  // HTTP with JSON tensors.
  const a = Array.from({ length: 16 }, (_, i) => i);
  const b = Array.from({ length: 16 }, () => 1);
  const jsonAnswer = await fetch(`${base}/v2/models/add_sub/infer`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      inputs: [
        { name: 'INPUT0', datatype: 'FP32', shape: [1, 16], data: a },
        { name: 'INPUT1', datatype: 'FP32', shape: [1, 16], data: b },
      ],
      outputs: [{ name: 'OUTPUT0' }],
    }),
  });
  const { outputs } = (await jsonAnswer.json()) as { outputs: Array<{ name: string; data: number[] }> };
  console.log(`HTTP JSON:   ${outputs[0]!.name} = ${outputs[0]!.data.join(' ')}`);

  // HTTP with binary tensors: a JSON header, then the raw bytes of each tensor.
  const bytes = (values: number[]) => Buffer.from(Float32Array.from(values).buffer);
  const header = Buffer.from(
    JSON.stringify({
      inputs: [
        { name: 'INPUT0', datatype: 'FP32', shape: [1, 16], parameters: { binary_data_size: 64 } },
        { name: 'INPUT1', datatype: 'FP32', shape: [1, 16], parameters: { binary_data_size: 64 } },
      ],
      outputs: [{ name: 'OUTPUT1', parameters: { binary_data: true } }],
    }),
  );
  const binaryAnswer = await fetch(`${base}/v2/models/add_sub/infer`, {
    method: 'POST',
    headers: { 'inference-header-content-length': String(header.length), 'accept-encoding': 'identity' },
    body: Buffer.concat([header, bytes(a), bytes(b)]),
  });
  const body = Buffer.from(await binaryAnswer.arrayBuffer());
  const jsonLength = Number(binaryAnswer.headers.get('inference-header-content-length'));
  const difference = new Float32Array(body.buffer.slice(body.byteOffset + jsonLength, body.byteOffset + body.length));
  console.log(`HTTP binary: OUTPUT1 = ${Array.from(difference).join(' ')}`);

  // gRPC: Triton's GRPCInferenceService, raw tensor contents.
  const definition = protoLoader.loadSync('grpc_service.proto', { includeDirs: [protoDirectory()], keepCase: true, longs: String });
  const { inference } = grpc.loadPackageDefinition(definition) as unknown as { inference: { GRPCInferenceService: grpc.ServiceClientConstructor } };
  const client = new inference.GRPCInferenceService(`127.0.0.1:${grpcService.port}`, grpc.credentials.createInsecure()) as unknown as {
    ModelInfer(request: object, callback: (error: Error | null, response: { outputs: Array<{ name: string }>; raw_output_contents: Buffer[] }) => void): void;
    close(): void;
  };
  const reply = await new Promise<{ outputs: Array<{ name: string }>; raw_output_contents: Buffer[] }>((resolve, reject) =>
    client.ModelInfer(
      {
        model_name: 'add_sub',
        inputs: [
          { name: 'INPUT0', datatype: 'FP32', shape: [1, 16] },
          { name: 'INPUT1', datatype: 'FP32', shape: [1, 16] },
        ],
        raw_input_contents: [bytes(a), bytes(b)],
      },
      (error, response) => (error ? reject(error) : resolve(response)),
    ),
  );
  client.close();
  const sum = reply.raw_output_contents[0]!;
  console.log(`gRPC:        ${reply.outputs[0]!.name} = ${Array.from(new Float32Array(sum.buffer.slice(sum.byteOffset, sum.byteOffset + sum.length))).join(' ')}`);

  // Prometheus scrapes the metrics port.
  const scrape = await (await fetch(`http://127.0.0.1:${metrics.port}/metrics`)).text();
  console.log(`metrics:     ${scrape.split('\n').find((line) => line.startsWith('nv_inference_request_success{'))}`);
} finally {
  await server.stop();
  await Promise.all([http.close(), grpcService.close(), metrics.close()]);
  await rm(repository, { recursive: true, force: true });
}
