import type { ServerDuplexStream, UntypedServiceImplementation } from '@grpc/grpc-js';
import { InferenceError, modelConfigToJson } from '@tritium/core';
import { modelVersion } from '../model-version.js';
import { serverMetadata } from '../server-metadata.js';
import { cudaRegisterRefusal } from '../shared-memory/client-shared-memory.js';
import type { InferRequestMessage } from './infer-request.js';
import { logSettingsRpc } from './log-settings-rpc.js';
import { modelInferRpc } from './model-infer.js';
import { loadOptions, unloadOptions } from './repository-parameters.js';
import type { ServingContext } from './serving-context.js';
import { serveInferStream, type StreamResponseMessage } from './stream-infer.js';
import { traceSettingRpc, type TraceSettingRequest } from './trace-setting-rpc.js';
import { unary } from './unary-call.js';
import type { WireParameter } from './wire-parameters.js';

interface ModelRequest {
  readonly name?: string;
  readonly version?: string;
}

interface RepositoryRequest {
  readonly repository_name?: string;
  readonly model_name?: string;
  readonly ready?: boolean;
  readonly parameters: Readonly<Record<string, WireParameter>>;
}

interface RegisterRequest {
  readonly name?: string;
  readonly key?: string;
  readonly offset?: string;
  readonly byte_size?: string;
}

/** Every rpc of Triton's GRPCInferenceService. */
export function inferenceService(context: ServingContext): UntypedServiceImplementation {
  const { server, memory } = context;
  return {
    ServerLive: unary(() => ({ live: server.isLive() })),
    ServerReady: unary(() => ({ ready: server.isReady() })),
    ModelReady: unary<ModelRequest, unknown>(async ({ request }) => ({ ready: await server.isModelReady(request.name ?? '', modelVersion(request.version)) })),
    ServerMetadata: unary(() => serverMetadata(server)),
    ModelMetadata: unary<ModelRequest, unknown>(({ request }) => server.modelMetadata(request.name ?? '', modelVersion(request.version))),
    ModelConfig: unary<ModelRequest, unknown>(async ({ request }) => ({
      config: modelConfigToJson(await server.modelConfig(request.name ?? '', modelVersion(request.version))),
    })),
    ModelStatistics: unary<ModelRequest, unknown>(({ request }) => server.statistics(request.name || undefined, modelVersion(request.version))),
    ModelInfer: modelInferRpc(context),
    ModelStreamInfer: (call: ServerDuplexStream<InferRequestMessage, StreamResponseMessage>) => serveInferStream(context, call),

    RepositoryIndex: unary<RepositoryRequest, unknown>(async ({ request }) => {
      checkRepositoryName(request);
      const models = (await server.repositoryIndex()).filter((entry) => !request.ready || entry.state === 'READY');
      return { models: models.map(({ name, version, state, reason }) => ({ name, version: version === undefined ? '' : String(version), state, reason })) };
    }),
    RepositoryModelLoad: unary<RepositoryRequest, unknown>(async ({ request }) => {
      checkRepositoryName(request);
      await server.loadModel(request.model_name ?? '', loadOptions(request.parameters));
      return {};
    }),
    RepositoryModelUnload: unary<RepositoryRequest, unknown>(async ({ request }) => {
      checkRepositoryName(request);
      await server.unloadModel(request.model_name ?? '', unloadOptions(request.parameters));
      return {};
    }),

    SystemSharedMemoryStatus: unary<{ name?: string }, unknown>(({ request }) => ({
      regions: Object.fromEntries(memory.status(request.name || undefined).map(({ name, key, offset, byteSize }) => [name, { name, key, offset, byte_size: byteSize }])),
    })),
    SystemSharedMemoryRegister: unary<RegisterRequest, unknown>(({ request }) => {
      memory.register(request.name ?? '', request.key ?? '', Number(request.offset ?? 0), Number(request.byte_size ?? 0));
      return {};
    }),
    SystemSharedMemoryUnregister: unary<{ name?: string }, unknown>(({ request }) => {
      memory.unregister(request.name || undefined);
      return {};
    }),

    // No CUDA regions, and none can be registered: there is no GPU memory here.
    CudaSharedMemoryStatus: unary<{ name?: string }, unknown>(({ request }) => {
      if (request.name) throw new InferenceError('NOT_FOUND', `Unable to find cuda shared memory region: '${request.name}'`);
      return { regions: {} };
    }),
    CudaSharedMemoryRegister: unary<{ name?: string }, unknown>(({ request }) => {
      memory.checkAllowed();
      throw cudaRegisterRefusal(request.name ?? '');
    }),
    CudaSharedMemoryUnregister: unary(() => {
      memory.checkAllowed();
      return {};
    }),
    TraceSetting: unary<TraceSettingRequest, unknown>(({ request }) => traceSettingRpc(server, request)),
    LogSettings: unary<{ settings: Readonly<Record<string, WireParameter>> }, unknown>(({ request }) => logSettingsRpc(server, request)),
  };
}

function checkRepositoryName(request: RepositoryRequest): void {
  if (request.repository_name) throw new InferenceError('UNSUPPORTED', "'repository_name' specification is not supported");
}
