/**
 * Triton's own Python client library, built as Triton's users get it, drives `tritium serve`
 * on Triton's example models over HTTP and gRPC (issue 20). The drivers under
 * helpers/tritonclient/ print what they see; the assertions are here, and they are Triton's
 * behaviour (texts and codes from Triton's server and core sources).
 */
import { readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTritonClient, exampleRepository, runDriver, TritiumServe, tritonclientMissing } from './helpers/tritonclient.js';

if (tritonclientMissing) console.warn(`skipping the tritonclient conformance test: ${tritonclientMissing}`);

const SUM = [Array.from({ length: 16 }, (_, i) => i + 1)];
const DIFFERENCE = [Array.from({ length: 16 }, (_, i) => i - 1)];
const asStrings = (rows: number[][]) => rows.map((row) => row.map(String));
/** Shared-memory keys of this run: the drivers create them under /dev/shm and must leave none. */
const SHM_PREFIX = `tritium_tc_${process.pid}`;
const shmLeftovers = () => readdirSync('/dev/shm').filter((name) => name.startsWith(SHM_PREFIX));

/** Triton: NOT_FOUND `Request for unknown model: '<m>' is not found` (core's model_lifecycle.cc GetModel, prefixed
 * by model_repository_manager.cc; INVALID_ARG only with model namespacing on): HTTP 404, gRPC NOT_FOUND. */
const unknownModel = (status: string) => ({ status, message: expect.stringMatching(/^Request for unknown model: 'no_such_model' is not found/) });
/** Triton: INVALID_ARG `[request id: <id>] output '<o>' already exists in request` (core's infer_request.cc). */
const duplicateOutput = (status: string) => ({ status, message: expect.stringContaining("output 'OUTPUT0' already exists in request") });
/** Triton: INTERNAL `Unable to open shared memory region: '<key>'` (server's shared_memory_manager.cc). */
const missingShmKey = (status: string) => ({ status, message: expect.stringMatching(new RegExp(`^Unable to open shared memory region: '/${SHM_PREFIX}_missing'`)) });

/**
 * A `tritium serve` on Triton's example models (`models`; all by default) started with
 * `flags` for the tests of the describe it is called in, and the client library built
 * beside it; what the tests read is filled in by beforeAll.
 */
function useTritiumServe(prefix: string, flags: readonly string[], models?: string[]): { site: string; http: string; grpc: string } {
  const ctx = { site: '', http: '', grpc: '' };
  let work: string | undefined;
  let server: TritiumServe | undefined;
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), prefix));
    ctx.site = await buildTritonClient(work);
    const repository = await exampleRepository(join(work, 'models'), models);
    server = new TritiumServe([`--model-repository=${repository}`, ...flags]);
    Object.assign(ctx, await server.addresses());
  }, 180_000);
  afterAll(async () => {
    await server?.stop();
    if (work) await rm(work, { recursive: true, force: true });
  }, 60_000);
  return ctx;
}

describe.skipIf(tritonclientMissing)("Triton's Python client (tritonclient) against tritium serve", () => {
  const served = useTritiumServe('tritium-tritonclient-', ['--model-control-mode=explicit', '--load-model=*', '--allow-client-shm=true']);
  afterAll(() => expect(shmLeftovers()).toEqual([]));
  /** What each protocol's driver saw: run once, read by several tests. */
  const runs = new Map<string, Promise<Record<string, any>>>();
  const observed = (driver: 'http_checks.py' | 'grpc_checks.py') => {
    let run = runs.get(driver);
    if (!run) runs.set(driver, (run = runDriver(served.site, driver, [driver === 'http_checks.py' ? served.http : served.grpc, SHM_PREFIX])));
    return run;
  };

  it('over HTTP: health, metadata, infer (JSON and binary), strings, shared memory, sequences, statistics', async () => {
    const seen = await observed('http_checks.py');
    expect(seen.live).toBe(true);
    expect(seen.ready).toBe(true);
    expect(seen.model_ready).toBe(true);
    expect(seen.unknown_model_ready).toBe(false);
    expect(seen.model_metadata).toEqual({
      name: 'simple',
      platform: 'onnxruntime_onnx',
      inputs: [['INPUT0', 'INT32', [-1, 16]], ['INPUT1', 'INT32', [-1, 16]]],
      outputs: [['OUTPUT0', 'INT32', [-1, 16]], ['OUTPUT1', 'INT32', [-1, 16]]],
    });
    expect(seen.model_config).toEqual({ name: 'simple_dyna_sequence', max_batch_size: 8, platform: 'onnxruntime_onnx', controls: ['START', 'END', 'READY', 'CORRID'], strategy: ['oldest'] });
    expect(seen.infer_json).toEqual({ id: 'tc-http', model_version: '1', binary: [false, false], OUTPUT0: SUM, OUTPUT1: DIFFERENCE });
    expect(seen.infer_binary).toEqual({ id: 'tc-http', model_version: '1', binary: [true, true], OUTPUT0: SUM, OUTPUT1: DIFFERENCE });
    expect(seen.strings).toEqual({ OUTPUT0: asStrings(SUM), OUTPUT1: asStrings(DIFFERENCE) });
    expect(seen.identity).toEqual({ shape: [1, 3], same: true });
    // 100 + 50 wraps in INT8, as Triton's simple_int8 does.
    expect(seen.int8).toEqual({ OUTPUT0: [-106, -106], OUTPUT1: [50, 50], dtype: 'int8' });
    expect(seen.shared_memory).toEqual({
      registered: ['tc_http_in', 'tc_http_out'],
      output_parameters: { shared_memory_region: 'tc_http_out', shared_memory_offset: 0, shared_memory_byte_size: 64 },
      OUTPUT0: SUM,
      OUTPUT1: DIFFERENCE,
      after_one: ['tc_http_out'],
      after_all: [],
    });
    // simple_sequence answers READY * (INPUT + START); simple_dyna_sequence adds END * CORRID.
    expect(seen.sequence).toEqual([1, 11, 7, 5]);
    expect(seen.sequence_string_id).toEqual([21, -7, -5]);
    expect(seen.dyna_sequence).toEqual([1, 11, 7, 5 + 1001]);
    // simple_string_dyna_sequence (Triton's dyna_sequence test backend, CORRID as a string) accumulates, and adds the id at the end.
    expect(seen.string_dyna_sequence).toEqual([20, 13, 8 + 1002]);
    expect(seen.string_dyna_sequence_bad_id).toEqual({ status: '400', message: expect.stringContaining('dyna sequence backend expects correlation ID to be decodable into an integer') });
    expect(seen.statistics).toEqual({ names: ['simple'], version: '1', inference_count: expect.any(Number), success: expect.any(Number) });
    expect(seen.statistics.inference_count).toBeGreaterThanOrEqual(3);
  });

  it("over HTTP: the server's name is 'triton'", async () => {
    const { server_metadata } = await observed('http_checks.py');
    expect(server_metadata).toMatchObject({ name: 'triton', has_version: true });
    expect(server_metadata.extensions).toEqual(expect.arrayContaining(['model_repository', 'statistics', 'sequence', 'system_shared_memory', 'binary_tensor_data']));
  });

  it("over HTTP: Triton's error codes and texts", async () => {
    const seen = await observed('http_checks.py');
    expect(seen.unknown_model).toEqual(unknownModel('404'));
    expect(seen.unknown_model_metadata).toEqual(unknownModel('404'));
    expect(seen.duplicate_outputs).toEqual(duplicateOutput('400'));
    expect(seen.shm_missing_key).toEqual(missingShmKey('500'));
  });

  it('over gRPC: health, metadata, infer, strings, shared memory, sequences (sync and stream), a decoupled stream, statistics', async () => {
    const seen = await observed('grpc_checks.py');
    expect(seen.live).toBe(true);
    expect(seen.ready).toBe(true);
    expect(seen.model_ready).toBe(true);
    expect(seen.model_metadata).toEqual({ name: 'simple', versions: ['1'], inputs: [['INPUT0', 'INT32', [-1, 16]], ['INPUT1', 'INT32', [-1, 16]]] });
    expect(seen.model_config).toEqual({ name: 'simple_sequence', max_batch_size: 8, platform: 'onnxruntime_onnx', controls: ['START', 'READY'] });
    expect(seen.infer).toEqual({ id: 'tc-grpc', model_version: '1', OUTPUT0: SUM, OUTPUT1: DIFFERENCE });
    expect(seen.strings).toEqual({ OUTPUT0: asStrings(SUM), OUTPUT1: asStrings(DIFFERENCE) });
    expect(seen.identity).toEqual({ OUTPUT0: [Array.from({ length: 16 }, (_, i) => String(i))] });
    expect(seen.shared_memory).toEqual({ registered: ['tc_grpc_in', 'tc_grpc_out'], shape: [1, 16], OUTPUT0: SUM, OUTPUT1: DIFFERENCE, after: {} });
    expect(seen.sequence).toEqual([1, 11, 7, 5]);
    expect(seen.dyna_sequence).toEqual([1, 11, 7, 5 + 3001]);
    expect(seen.string_dyna_sequence).toEqual([20, 13, 8 + 3002]);
    expect(seen.string_dyna_sequence_bad_id).toEqual({ status: 'StatusCode.INVALID_ARGUMENT', message: expect.stringContaining('dyna sequence backend expects correlation ID to be decodable into an integer') });
    // Two simple_sequence sequences and a simple_dyna_sequence one, interleaved on one stream.
    expect(seen.sequence_stream).toEqual({
      'simple_sequence-2000-0': 1,
      'simple_sequence-2000-1': 11,
      'simple_sequence-2000-2': 7,
      'simple_sequence-2001-0': 1,
      'simple_sequence-2001-1': -11,
      'simple_sequence-2001-2': -7,
      'simple_dyna_sequence-2002-0': 1,
      'simple_dyna_sequence-2002-1': 11,
      'simple_dyna_sequence-2002-2': 7 + 2002,
    });
    expect(seen.decoupled).toEqual([
      { id: 'tc-repeat', final: false, OUT: 4, IDX: 0 },
      { id: 'tc-repeat', final: false, OUT: 2, IDX: 1 },
      { id: 'tc-repeat', final: false, OUT: 0, IDX: 2 },
      { id: 'tc-repeat', final: false, OUT: 1, IDX: 3 },
      { id: 'tc-repeat', final: true, OUT: null, IDX: null },
    ]);
    expect(seen.statistics.names).toEqual(['simple_sequence']);
    expect(seen.statistics.inference_count).toBeGreaterThanOrEqual(6);
  });

  it("over gRPC: the server's name is 'triton'", async () => {
    const { server_metadata } = await observed('grpc_checks.py');
    expect(server_metadata).toMatchObject({ name: 'triton', has_version: true });
  });

  it("over gRPC: Triton's error codes and texts", async () => {
    const seen = await observed('grpc_checks.py');
    expect(seen.unknown_model).toEqual(unknownModel('StatusCode.NOT_FOUND'));
    expect(seen.unknown_model_metadata).toEqual(unknownModel('StatusCode.NOT_FOUND'));
    expect(seen.duplicate_outputs).toEqual(duplicateOutput('StatusCode.INVALID_ARGUMENT'));
    // server's src/grpc/infer_handler.cc; Triton's grpc_explicit_int_content_client.py looks for this text.
    expect(seen.contents_twice).toEqual({
      status: 'StatusCode.INVALID_ARGUMENT',
      message: expect.stringContaining("contents field must not be specified when using raw_input_contents for 'INPUT0' for model 'simple'"),
    });
    expect(seen.shm_missing_key).toEqual(missingShmKey('StatusCode.INTERNAL'));
  });

  for (const protocol of ['http', 'grpc'] as const) {
    it(`model control over ${protocol}: load with a config override, unload, reload, failed loads`, async () => {
      const seen = await runDriver(served.site, 'control_checks.py', [protocol, protocol === 'http' ? served.http : served.grpc, 'explicit']);
      expect(Object.keys(seen.index).sort()).toEqual(['densenet_onnx', 'repeat_int32', 'simple', 'simple_dyna_sequence', 'simple_identity', 'simple_int8', 'simple_sequence', 'simple_string', 'simple_string_dyna_sequence']);
      expect(seen.load_override).toEqual({ ready: true, max_batch_size: 4 });
      expect(seen.unload).toEqual({ ready: false, state: 'UNAVAILABLE' });
      // A load without an override reads the repository's config again.
      expect(seen.reload).toEqual({ ready: true, max_batch_size: 8 });
      // Core's model_repository_manager.cc: INTERNAL `failed to load '<m>', failed to poll from model repository`,
      // for a name in no repository and for an override that is not a config alike; the model
      // that was serving goes on.
      const failedToLoad = (model: string) => ({
        status: protocol === 'http' ? '500' : 'StatusCode.INTERNAL',
        message: expect.stringMatching(new RegExp(`^failed to load '${model}', failed to poll from model repository`)),
      });
      expect(seen.load_unknown).toEqual(failedToLoad('no_such_model'));
      expect(seen.load_bad_override).toEqual(failedToLoad('simple_int8'));
      expect(seen.ready_after_bad_override).toBe(true);
    });
  }
});

describe.skipIf(tritonclientMissing)('tritonclient against tritium serve without --model-control-mode=explicit', () => {
  const served = useTritiumServe('tritium-tritonclient-none-', [], ['simple']);

  // Core's model_repository_manager.cc: UNAVAILABLE (HTTP 503) for mode none and poll alike.
  for (const protocol of ['http', 'grpc'] as const) {
    it(`refuses load and unload over ${protocol} with Triton's code and text`, async () => {
      const seen = await runDriver(served.site, 'control_checks.py', [protocol, protocol === 'http' ? served.http : served.grpc, 'none']);
      const refusal = { status: protocol === 'http' ? '503' : 'StatusCode.UNAVAILABLE', message: expect.stringMatching(/^explicit model load \/ unload is not allowed if polling is enabled/) };
      expect(seen.load).toEqual(refusal);
      expect(seen.unload).toEqual(refusal);
      expect(seen.ready).toBe(true);
    });
  }
});
