import { describe, expect, it } from 'vitest';
import { DEFAULT_LOG_SETTINGS } from '@tritium/core';
import { DEFAULTS, parseCommandLine, UsageError, type ServeOptions } from '../src/cli/arguments.js';
import { FIXED, FLAGS, IGNORED, UNSUPPORTED } from '../src/cli/flags.js';
import { usage } from '../src/cli/usage.js';

function serve(...argv: string[]): ServeOptions {
  const command = parseCommandLine(argv);
  if (command.kind !== 'serve') throw new Error(`expected serve, got ${command.kind}`);
  return command.options;
}

/** The UsageError message a command line is refused with. */
function refusal(...argv: string[]): string {
  try {
    parseCommandLine(argv);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error(`accepted: ${argv.join(' ')}`);
}

describe('parseCommandLine', () => {
  it("gives Triton's defaults for a bare repository", () => {
    expect(serve('serve', '--model-repository', '/models')).toEqual({
      server: {
        modelRepository: ['/models'],
        modelControlMode: 'none',
        startupModels: undefined,
        pollIntervalMs: undefined,
        modelConfigName: undefined,
        exitTimeoutMs: 30_000,
        continueOnLoadError: false,
        metrics: {},
        responseCache: undefined,
      },
      http: { host: '0.0.0.0', port: 8000 },
      grpc: { host: '0.0.0.0', port: 8001 },
      metrics: { host: '0.0.0.0', port: 8002 },
      backends: { python: { executionEnvironmentRoots: [] }, onnxruntime: {} },
      log: DEFAULT_LOG_SETTINGS,
      ignored: [],
    });
    expect([DEFAULTS.httpPort, DEFAULTS.grpcPort, DEFAULTS.metricsPort]).toEqual([8000, 8001, 8002]);
  });

  it("takes tritonserver's form without 'serve', --flag=value and --flag value alike", () => {
    expect(serve('--model-repository=/models', '--http-port', '9000')).toEqual(serve('serve', '--model-repository', '/models', '--http-port=9000'));
  });

  it('keeps every --model-repository (and --model-store), once each', () => {
    expect(serve('--model-repository=/a', '--model-store=/b', '--model-repository=/a').server.modelRepository).toEqual(['/a', '/b']);
  });

  it('reads the model control flags', () => {
    expect(serve('--model-repository=/m', '--model-control-mode=EXPLICIT', '--load-model=a', '--load-model', 'b', '--load-model=a').server).toMatchObject({
      modelControlMode: 'explicit',
      startupModels: ['a', 'b'],
    });
    expect(serve('--model-repository=/m', '--model-control-mode=explicit').server.startupModels).toEqual([]);
    expect(serve('--model-repository=/m', '--model-control-mode=poll', '--repository-poll-secs=5').server).toMatchObject({ modelControlMode: 'poll', pollIntervalMs: 5000 });
    expect(serve('--model-repository=/m', '--model-config-name=h100').server.modelConfigName).toBe('h100');
  });

  it('maps --exit-on-error, --exit-timeout-secs and the last value of a flag given twice', () => {
    const options = serve('--model-repository=/m', '--exit-on-error=false', '--exit-timeout-secs=5', '--exit-timeout-secs=7');
    expect(options.server).toMatchObject({ continueOnLoadError: true, exitTimeoutMs: 7000 });
    expect(serve('--model-repository=/m', '--exit-on-error=ON').server.continueOnLoadError).toBe(false);
  });

  it('maps --max-instances-per-model to the server option, left to its default when absent', () => {
    expect(serve('--model-repository=/m', '--max-instances-per-model=200').server.maxInstancesPerModel).toBe(200);
    expect(serve('--model-repository=/m').server.maxInstancesPerModel).toBeUndefined();
  });

  it('reads services: ports, addresses, the body limit, and --allow-* turning one off', () => {
    const options = serve(
      '--model-repository=/m',
      '--http-address=127.0.0.1',
      '--http-port=0',
      '--grpc-address=::1',
      '--grpc-port=9001',
      '--metrics-port=0',
      '--http-max-input-size=1048576',
      '--grpc-max-input-size=2097152',
    );
    expect(options.http).toEqual({ host: '127.0.0.1', port: 0, bodyLimitBytes: 1_048_576 });
    expect(options.grpc).toEqual({ host: '::1', port: 9001, maxReceiveMessageBytes: 2_097_152 });
    // As Triton, metrics listen on the HTTP address unless told otherwise.
    expect(options.metrics).toEqual({ host: '127.0.0.1', port: 0 });
    expect(serve('--model-repository=/m', '--http-address=127.0.0.1', '--metrics-address=10.0.0.1').metrics?.host).toBe('10.0.0.1');
    const off = serve('--model-repository=/m', '--allow-http=false', '--allow-grpc=0', '--allow-metrics=off');
    expect([off.http, off.grpc, off.metrics, off.server.metrics]).toEqual([undefined, undefined, undefined, false]);
  });

  it("takes Triton's --allow-client-shm for both protocols, leaving the frontends' default (false) when absent", () => {
    const allowed = serve('--model-repository=/m', '--allow-client-shm=true');
    expect([allowed.http?.allowClientSharedMemory, allowed.grpc?.allowClientSharedMemory]).toEqual([true, true]);
    const refused = serve('--model-repository=/m', '--allow-client-shm', 'off');
    expect([refused.http?.allowClientSharedMemory, refused.grpc?.allowClientSharedMemory]).toEqual([false, false]);
    expect(serve('--model-repository=/m').http?.allowClientSharedMemory).toBeUndefined();
    expect(refusal('--model-repository=/m', '--allow-client-shm=maybe')).toContain("--allow-client-shm must be true or false, got 'maybe'");
  });

  it('maps --metrics-config settings to core metrics options', () => {
    expect(serve('--model-repository=/m', '--metrics-config=summary_latencies=true', '--metrics-config', 'counter_latencies=false', '--metrics-config=histogram_latencies=1').server.metrics).toEqual({
      summaryLatencies: true,
      counterLatencies: false,
      histogramLatencies: true,
    });
  });

  it("maps Triton's --cache-config to core's response cache", () => {
    expect(serve('--model-repository=/m', '--cache-config=local,size=1048576').server.responseCache).toEqual({ type: 'local', sizeBytes: 1_048_576 });
    expect(
      serve('--model-repository=/m', '--cache-config', 'redis,host=cache.local', '--cache-config=redis,port=6380', '--cache-config=redis,password=a=b,c', '--cache-config=redis,socket_timeout=250').server.responseCache,
    ).toEqual({ type: 'redis', host: 'cache.local', port: 6380, password: 'a=b,c', timeoutMs: 250 });
    // Triton's socket_timeout=0 waits for ever; here it takes core's default bound.
    expect(serve('--model-repository=/m', '--cache-config=redis,host=h', '--cache-config=redis,port=1', '--cache-config=redis,socket_timeout=0').server.responseCache).toMatchObject({ timeoutMs: undefined });
  });

  it("maps --id to the server's id and --model-load-thread-count to its load concurrency, both left to core's defaults when absent", () => {
    expect(serve('--model-repository=/m', '--id=edge-7', '--model-load-thread-count=2').server).toMatchObject({ serverId: 'edge-7', modelLoadThreadCount: 2 });
    // Triton uses max(1, n): core counts 0 as 1.
    expect(serve('--model-repository=/m', '--model-load-thread-count', '0').server.modelLoadThreadCount).toBe(0);
    expect(serve('--model-repository=/m').server).toMatchObject({ serverId: undefined, modelLoadThreadCount: undefined });
    expect(refusal('--model-repository=/m', '--model-load-thread-count=-1')).toBe("--model-load-thread-count must be an integer from 0 to 2147483647, got '-1'");
  });

  it('reads the OpenAI flags: the port at --http-address, with --http-max-input-size as its body limit', () => {
    expect(serve('serve', '--model-repository=/m', '--http-address=127.0.0.1', '--openai-port=0', '--http-max-input-size=1024', '--openai-chat-template=/t.jinja', '--openai-default-max-tokens=32').openai).toEqual({
      host: '127.0.0.1',
      port: 0,
      bodyLimitBytes: 1024,
      chatTemplateFile: '/t.jinja',
      defaultMaxTokens: 32,
    });
    expect(serve('serve', '--model-repository=/m').openai).toBeUndefined();
    expect(refusal('serve', '--model-repository=/m', '--openai-default-max-tokens=32')).toMatch(/need --openai-port/);
  });

  it('maps --model-load-retry-count and --strict-readiness to the server options, left to core\'s defaults when absent', () => {
    expect(serve('--model-repository=/m', '--model-load-retry-count=3', '--strict-readiness=false').server).toMatchObject({ modelLoadRetryCount: 3, strictReadiness: false });
    expect(serve('--model-repository=/m', '--strict-readiness', 'on').server.strictReadiness).toBe(true);
    expect(serve('--model-repository=/m').server).toMatchObject({ modelLoadRetryCount: undefined, strictReadiness: undefined });
    expect(refusal('--model-repository=/m', '--model-load-retry-count=-2')).toBe("--model-load-retry-count must be an integer from 0 to 2147483647, got '-2'");
    expect(refusal('--model-repository=/m', '--strict-readiness=perhaps')).toBe("--strict-readiness must be true or false, got 'perhaps'");
  });

  it("refuses --http-max-input-size of 0 or less in Triton's words", () => {
    expect(refusal('--model-repository=/m', '--http-max-input-size=0')).toBe('Error: --http-max-input-size must be greater than 0.');
    expect(refusal('--model-repository=/m', '--http-max-input-size=-1024')).toBe('Error: --http-max-input-size must be greater than 0.');
    expect(refusal('--model-repository=/m', '--http-max-input-size=lots')).toBe("--http-max-input-size must be an integer from 1 to 9007199254740991, got 'lots'");
  });

  it("maps Triton's --backend-config settings that have a meaning here to the backends' options", () => {
    const given = serve(
      '--model-repository=/m',
      '--backend-config=python,interpreter=/opt/py/bin/python3',
      '--backend-config',
      'python,execution-env-root=/opt/envs',
      '--backend-config=python,execution-env-root=/srv/envs',
      '--backend-config=python,stub-timeout-seconds=120',
      `--backend-config=python,shm-default-byte-size=${4 << 20}`,
      '--backend-config=python,shm-growth-byte-size=1048576',
      '--backend-config=onnxruntime,default-max-batch-size=16',
    );
    expect(given.backends).toEqual({
      python: {
        interpreter: '/opt/py/bin/python3',
        executionEnvironmentRoots: ['/opt/envs', '/srv/envs'],
        startTimeoutMs: 120_000,
        sharedMemoryDefaultBytes: 4 << 20,
        sharedMemoryGrowthBytes: 1 << 20,
      },
      onnxruntime: { defaultMaxBatchSize: 16 },
    });
    expect(given.ignored).toEqual([]);
  });

  it("applies a setting without a backend to every backend, a backend's own overriding it in any order (as Triton)", () => {
    expect(serve('--model-repository=/m', '--backend-config=default-max-batch-size=8').backends.onnxruntime).toEqual({ defaultMaxBatchSize: 8 });
    expect(serve('--model-repository=/m', '--backend-config=onnxruntime,default-max-batch-size=2', '--backend-config=default-max-batch-size=8').backends.onnxruntime).toEqual({ defaultMaxBatchSize: 2 });
    expect(serve('--model-repository=/m', '--backend-config=stub-timeout-seconds=5').backends.python.startTimeoutMs).toBe(5000);
    // Triton's onnxruntime backend reads any integer; below 0 means no batching.
    expect(serve('--model-repository=/m', '--backend-config=onnxruntime,default-max-batch-size=-3').backends.onnxruntime).toEqual({ defaultMaxBatchSize: 0 });
  });

  it('accepts the settings with no meaning here, listing each as ignored with why', () => {
    const given = serve(
      '--model-repository=/m',
      '--backend-config=python,thread-pool-size=4',
      '--backend-config=tensorrt,coalesce-request-input=true',
      '--backend-config=backend-directory=/opt/tritonserver/backends',
    );
    expect(given.ignored).toEqual([
      { flag: '--backend-config backend-directory', why: 'it has no meaning here for any backend' },
      {
        flag: '--backend-config python,thread-pool-size',
        why: "it has no meaning here (tritium's python backend takes interpreter, execution-env-root, stub-timeout-seconds, shm-default-byte-size, shm-growth-byte-size)",
      },
      { flag: '--backend-config tensorrt,coalesce-request-input', why: 'it has no meaning here (tritium takes settings for python and onnxruntime only)' },
    ]);
    expect(given.backends).toEqual({ python: { executionEnvironmentRoots: [] }, onnxruntime: {} });
  });

  it.each([
    [',stub-timeout-seconds=1', 'No backend specified. --backend-config option format is <backend name>,<setting>=<value> or <setting>=<value>. Got ,stub-timeout-seconds=1'],
    ['python', "--backend-config option format is '<backend name>,<setting>=<value>'. Got python"],
    ['python,stub-timeout-seconds', "--backend-config option format is '<backend name>,<setting>=<value>'. Got python,stub-timeout-seconds"],
    ['python,=1', "--backend-config option format is '<backend name>,<setting>=<value>'. Got python,=1"],
    ['python,stub-timeout-seconds=', "--backend-config option format is '<backend name>,<setting>=<value>'. Got python,stub-timeout-seconds="],
    ['python,stub-timeout-seconds=0', "--backend-config python,stub-timeout-seconds=0: stub-timeout-seconds can't be smaller than or equal to zero."],
    ['python,stub-timeout-seconds=soon', '--backend-config python,stub-timeout-seconds=soon: stub-timeout-seconds must be an integer'],
    ['python,stub-timeout-seconds=9999999', "--backend-config python,stub-timeout-seconds=9999999: stub-timeout-seconds can't be larger than 2147483"],
    ['python,shm-default-byte-size=1048575', "--backend-config python,shm-default-byte-size=1048575: shm-default-byte-size can't be smaller than 1 MiB (1048576 bytes)"],
    ['python,shm-growth-byte-size=0', "--backend-config python,shm-growth-byte-size=0: shm-growth-byte-size can't be smaller than or equal to zero."],
    ['default-max-batch-size=four', '--backend-config default-max-batch-size=four: default-max-batch-size must be an integer'],
  ])("refuses --backend-config=%s in Triton's words where it has them", (setting, message) => {
    expect(refusal('--model-repository=/m', `--backend-config=${setting}`)).toBe(message);
  });

  it('reads the logging flags', () => {
    expect(serve('--model-repository=/m', '--log-verbose=2', '--log-info=false', '--log-warning=false', '--log-error=true', '--log-format=ISO8601', '--log-file=/tmp/t.log').log).toEqual({
      log_file: '/tmp/t.log',
      log_info: false,
      log_warning: false,
      log_error: true,
      log_verbose_level: 2,
      log_format: 'ISO8601',
    });
    expect(serve('--model-repository=/m', '--log-verbose=true').log.log_verbose_level).toBe(1);
  });

  it('accepts the ignored flags, listing each with why', () => {
    const options = serve('--model-repository=/m', '--http-thread-count=8', '--pinned-memory-pool-byte-size=0', '--backend-directory=/opt/tritonserver/backends');
    expect(options.ignored.map((i) => i.flag)).toEqual(['--http-thread-count', '--pinned-memory-pool-byte-size', '--backend-directory']);
    expect(options.ignored[0]!.why).toBe(IGNORED['http-thread-count']);
  });

  it('accepts a fixed flag at the value tritium behaves by', () => {
    expect(() => serve('--model-repository=/m', '--rate-limit=OFF', '--grpc-use-ssl=0', '--allow-sagemaker=false')).not.toThrow();
  });

  it('reads --rate-limit and --rate-limit-resource as tritonserver does, refusing bad ones', () => {
    expect(serve('--model-repository=/m').server.rateLimit).toBeUndefined();
    expect(serve('--model-repository=/m', '--rate-limit=EXECUTION_COUNT', '--rate-limit-resource=R1:10', '--rate-limit-resource=R2:5:0').server.rateLimit).toEqual({
      mode: 'execution_count',
      resources: [{ name: 'R1', count: 10 }, { name: 'R2', count: 5, device: 0 }],
    });
    expect(serve('--model-repository=/m', '--rate-limit-resource=R1:1').server.rateLimit).toEqual({ mode: 'off', resources: [{ name: 'R1', count: 1 }] });
    expect(refusal('--model-repository=/m', '--rate-limit=sometimes')).toBe("invalid argument for --rate-limit: 'sometimes' (execution_count or off)");
    expect(refusal('--model-repository=/m', '--rate-limit-resource=R1')).toBe("--rate-limit-resource option format is '<resource_name>:<count>:<device>' or '<resource_name>:<count>'. Got R1");
    expect(refusal('--model-repository=/m', '--rate-limit-resource=R1:-2')).toBe("--rate-limit-resource R1:-2: '-2' is not a non-negative integer");
  });

  it('answers help and version', () => {
    expect(parseCommandLine(['--help'])).toEqual({ kind: 'help' });
    expect(parseCommandLine(['serve', '--help'])).toEqual({ kind: 'help' });
    expect(parseCommandLine(['--version'])).toEqual({ kind: 'version' });
  });
});

describe('parseCommandLine refuses, naming the flag or value at fault', () => {
  it.each([
    [['--http-port=80x', '--model-repository=/m'], "--http-port must be an integer from 0 to 65535, got '80x'"],
    [['--model-repository=/m', '--grpc-port=65536'], "--grpc-port must be an integer from 0 to 65535, got '65536'"],
    [['--model-repository=/m', '--exit-timeout-secs=-1'], "--exit-timeout-secs must be an integer from 0 to 2147483, got '-1'"],
    [['--model-repository=/m', '--exit-timeout-secs=1.5'], "--exit-timeout-secs must be an integer from 0 to 2147483, got '1.5'"],
    [['--model-repository=/m', '--grpc-max-input-size=2147483648'], '--grpc-max-input-size must be an integer from 1 to 2147483647'],
    [['--model-repository=/m', '--max-instances-per-model=0'], '--max-instances-per-model must be an integer from 1'],
    [['--model-repository=/m', '--allow-http=yes'], "--allow-http must be true or false, got 'yes'"],
    [['--model-repository=/m', '--model-control-mode=auto'], "--model-control-mode must be one of none, poll, explicit, got 'auto'"],
    [['--model-repository=/m', '--log-format=iso'], "--log-format must be default or ISO8601, got 'iso'"],
    [['--model-repository=/m', '--log-verbose=loud'], "--log-verbose must be an integer from 0 to 2147483647, got 'loud'"],
  ])('bad values: %j', (argv, message) => {
    expect(refusal(...argv)).toContain(message);
  });

  it('requires a repository', () => {
    expect(refusal('serve')).toBe('--model-repository is required: the directory of models to serve');
    expect(refusal()).toBe('--model-repository is required: the directory of models to serve');
  });

  it('refuses unknown options, commands and stray arguments', () => {
    expect(refusal('--model-repository=/m', '--modle-repository=/n')).toBe("unknown option '--modle-repository' (tritium --help lists the options)");
    expect(refusal('--model-repository=/m', '-v')).toBe("unknown option '-v' (tritium --help lists the options)");
    expect(refusal('start', '--model-repository=/m')).toContain("unknown command 'start': the command is 'serve'");
    expect(refusal('--model-repository', '/m', 'extra')).toContain("unexpected argument 'extra'");
    expect(refusal('--model-repository=/m', '--', '--x')).toContain("unexpected '--'");
  });

  it('refuses a flag without its value, and a value given to a flag that takes none', () => {
    expect(refusal('--model-repository')).toBe('--model-repository needs a value <path>');
    expect(refusal('--http-port', '--model-repository=/m')).toBe('--http-port needs a value <port>');
    expect(refusal('--model-repository=')).toBe('--model-repository needs a value <path>');
    expect(refusal('--model-repository=/m', '--version=2')).toBe("--version takes no value, got '2'");
  });

  it('refuses a fixed flag at another value, and every unsupported Triton flag, saying why', () => {
    expect(refusal('--model-repository=/m', '--allow-sagemaker=true')).toBe(`--allow-sagemaker=true is not supported by tritium (only false): ${FIXED['allow-sagemaker']!.why}`);
    expect(refusal('--model-repository=/m', '--grpc-use-ssl=maybe')).toBe("--grpc-use-ssl must be true or false, got 'maybe'");
    for (const [name, why] of Object.entries(UNSUPPORTED)) {
      expect(refusal('--model-repository=/m', `--${name}=1`)).toBe(`--${name} is not supported by tritium: ${why}`);
    }
    expect(refusal('--model-repository=/m', '--disable-auto-complete-config')).toContain('is not supported by tritium');
  });

  it('refuses model control flags outside their mode, and * beside other names', () => {
    expect(refusal('--model-repository=/m', '--load-model=a')).toBe('--load-model applies only with --model-control-mode=explicit');
    expect(refusal('--model-repository=/m', '--model-control-mode=explicit', '--load-model=*', '--load-model=a')).toContain('--load-model=* loads every model');
    expect(refusal('--model-repository=/m', '--repository-poll-secs=5')).toBe('--repository-poll-secs applies only with --model-control-mode=poll');
    expect(refusal('--model-repository=/m', '--model-control-mode=poll', '--repository-poll-secs=0')).toContain('--repository-poll-secs must be an integer from 1');
  });

  it('refuses two services on one address and port', () => {
    expect(refusal('--model-repository=/m', '--grpc-port=8000')).toBe('--http-port and --grpc-port are both 8000 on 0.0.0.0: each service needs its own port');
    expect(() => serve('--model-repository=/m', '--grpc-port=8000', '--grpc-address=127.0.0.1')).not.toThrow();
    expect(() => serve('--model-repository=/m', '--http-port=0', '--grpc-port=0', '--metrics-port=0')).not.toThrow();
    expect(() => serve('--model-repository=/m', '--allow-http=false', '--grpc-port=8000')).not.toThrow();
  });

  it.each([
    [['--cache-config=local'], "--cache-config takes <cache>,<setting>=<value> (local,size=<bytes> or redis,host=<host>), got 'local'"],
    [['--cache-config=local,size'], "--cache-config takes <cache>,<setting>=<value>, got 'size'"],
    [['--cache-config=local,size='], "--cache-config takes <cache>,<setting>=<value>, got 'size='"],
    [['--cache-config=local,size=big'], "--cache-config local,size must be an integer from 0"],
    [['--cache-config=local,capacity=1'], '--cache-config local,capacity is not supported by tritium: the local cache takes size'],
    [['--cache-config=redis,host=h'], '--cache-config redis needs both redis,host=<host> and redis,port=<port>'],
    [['--cache-config=redis,host=h', '--cache-config=redis,port=0'], '--cache-config redis,port must be an integer from 1 to 65535'],
    [['--cache-config=redis,host=h', '--cache-config=redis,port=1', '--cache-config=redis,pool_size=4'], '--cache-config redis,pool_size is not supported by tritium'],
    [['--cache-config=local,size=1', '--cache-config=redis,host=h'], '--cache-config names local and redis: tritium runs one response cache'],
    [['--cache-config=memcached,size=1'], "--cache-config: unknown cache 'memcached' (tritium has local and redis)"],
    [['--metrics-config=summary_quantiles=0.5:0.05'], '--metrics-config summary_quantiles is not supported by tritium: it has counter_latencies, summary_latencies, histogram_latencies'],
    [['--metrics-config=summary_latencies'], "--metrics-config takes <setting>=<value>, got 'summary_latencies'"],
    [['--metrics-config=summary_latencies=sometimes'], "--metrics-config summary_latencies must be true or false, got 'sometimes'"],
  ])('bad cache and metrics settings: %j', (argv, message) => {
    expect(refusal('--model-repository=/m', ...argv)).toContain(message);
  });
});

describe('--trace-config', () => {
  const trace = (...specs: string[]) => serve('--model-repository=/m', ...specs.map((spec) => `--trace-config=${spec}`)).server.trace;
  const traceRefusal = (spec: string) => refusal('--model-repository=/m', `--trace-config=${spec}`);

  it('reads the global settings and Triton mode settings as tritonserver does', () => {
    expect(trace()).toBeUndefined();
    expect(trace('triton,file=/tmp/t.json', 'triton,log-frequency=50', 'rate=100', 'level=TIMESTAMPS', 'count=100', 'mode=triton')).toEqual({
      trace_file: '/tmp/t.json',
      log_frequency: 50,
      trace_rate: 100,
      trace_level: ['TIMESTAMPS'],
      trace_count: 100,
      trace_mode: 'triton',
    });
    // Without the mode too; level words in any case, as Triton's (on, true, min, max mean TIMESTAMPS).
    expect(trace('file=/tmp/a', 'log-frequency=0', 'level=on')).toEqual({ trace_file: '/tmp/a', log_frequency: 0, trace_level: ['TIMESTAMPS'] });
    expect(trace('level=timestamps', 'level=OFF')).toEqual({ trace_level: ['OFF'] });
    expect(trace('count=-1')).toEqual({ trace_count: -1 });
    expect(trace('level=tensors', 'level=timestamps')).toEqual({ trace_level: ['TIMESTAMPS', 'TENSORS'] });
  });

  it("reads OpenTelemetry mode's settings as tritonserver does: url, resources, the batch span processor's", () => {
    expect(trace('mode=opentelemetry')).toEqual({ trace_mode: 'opentelemetry', opentelemetry: {} });
    expect(
      trace(
        'level=TIMESTAMPS',
        'rate=0',
        'opentelemetry,resource=test.key=test.value',
        'opentelemetry,url=localhost:4318/v1/traces',
        'opentelemetry,resource=service.name=test_triton',
        'opentelemetry,bsp_max_queue_size=100',
        'opentelemetry,bsp_schedule_delay=0',
        'opentelemetry,bsp_max_export_batch_size=10',
        'mode=OpenTelemetry',
      ),
    ).toEqual({
      trace_mode: 'opentelemetry',
      trace_level: ['TIMESTAMPS'],
      trace_rate: 0,
      opentelemetry: {
        url: 'localhost:4318/v1/traces',
        resource: { 'test.key': 'test.value', 'service.name': 'test_triton' },
        bsp_max_queue_size: 100,
        bsp_schedule_delay: 0,
        bsp_max_export_batch_size: 10,
      },
    });
  });

  it.each([
    [['mode=opentelemetry', 'triton,file=/tmp/t.json'], /triton,file=\/tmp\/t.json: applies to trace mode triton, and the mode is opentelemetry/],
    [['mode=opentelemetry', 'log-frequency=5'], /log-frequency=5: applies to trace mode triton, and the mode is opentelemetry/],
    [['opentelemetry,url=localhost:4318/v1/traces'], /applies to trace mode opentelemetry, and the mode is triton \(--trace-config mode=opentelemetry\)/],
    [['mode=opentelemetry', 'opentelemetry,port=4318'], /unknown trace setting 'port' \(known: url, resource, bsp_max_queue_size, bsp_schedule_delay, bsp_max_export_batch_size\)/],
    [['mode=opentelemetry', 'opentelemetry,rate=1'], /unknown trace setting 'rate'/],
    [['mode=opentelemetry', 'opentelemetry,resource=novalue'], /a resource is <key>=<value>/],
    [['mode=opentelemetry', 'opentelemetry,bsp_schedule_delay=soon'], /bsp_schedule_delay=soon: must be an integer from 0 to 4294967295/],
    [['mode=otel'], /invalid value for trace mode option: otel. Available options are "triton" and "opentelemetry"/],
  ])('refuses %j in OpenTelemetry mode, naming it', (specs, message) => {
    expect(refusal('--model-repository=/m', ...specs.map((spec) => `--trace-config=${spec}`))).toMatch(message);
  });

  it.each([
    ['level=loud', /invalid value for trace level option: loud/],
    ['jaeger,file=/x', /invalid value for trace mode option: jaeger/],
    ['speed=1', /unknown trace setting 'speed'/],
    ['rate=fast', /--trace-config rate=fast: must be an integer from 0 to 4294967295/],
    ['count=-2', /must be an integer from -1/],
    ['rate', /--trace-config takes/],
    ['triton,file=', /--trace-config takes/],
  ])('refuses %s, naming it', (spec, message) => {
    expect(traceRefusal(spec)).toMatch(message);
  });

  it("refuses Triton's deprecated --trace-* flags, pointing to --trace-config", () => {
    expect(refusal('--model-repository=/m', '--trace-rate=1')).toMatch(/deprecated in Triton: use --trace-config/);
  });
});

describe('usage', () => {
  it('lists every implemented flag and every fixed and ignored one', () => {
    const text = usage();
    for (const name of [...Object.keys(FLAGS), ...Object.keys(FIXED), ...Object.keys(IGNORED)]) expect(text).toContain(`--${name}`);
    for (const line of text.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
  });
});
