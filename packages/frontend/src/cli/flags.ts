import { RESTRICTED_CATEGORIES } from '../restricted-api.js';

/**
 * The command's flags: tritonserver's names, in four kinds. `FLAGS` are implemented;
 * `FIXED` are accepted only at the value that says what tritium does anyway; `IGNORED`
 * are accepted and ignored, because ignoring them changes nothing a client can see;
 * `UNSUPPORTED` are refused, saying why. A name in none of them is not a Triton flag.
 */

/** A flag the command implements. */
export interface Flag {
  /** The value's placeholder in the usage text; undefined for a flag that takes none. */
  readonly value?: string;
  readonly help: string;
}

export const FLAGS: Readonly<Record<string, Flag>> = {
  help: { help: 'Print this usage and exit.' },
  version: { help: "Print tritium's version and exit." },
  'model-repository': { value: '<path>', help: 'A model repository: a directory, s3://[host:port/]bucket/path or as://account/container/path (docs/object-storage.md); repeat for several. Required. Alias: --model-store.' },
  'model-control-mode': { value: '<none|poll|explicit>', help: "none: load every model at start (default); poll: also follow the repository's changes; explicit: load and unload through the model-control API." },
  'load-model': { value: '<name>', help: "Explicit mode: a model to load at start; repeat for several; '*' (alone) loads all." },
  'repository-poll-secs': { value: '<seconds>', help: 'Poll mode: seconds between two scans of the repository (default 15).' },
  'model-config-name': { value: '<name>', help: "Use <model>/configs/<name>.pbtxt in place of config.pbtxt where it exists." },
  'exit-on-error': { value: '<boolean>', help: 'Exit when a model fails to load at start (default true); false serves the models that loaded.' },
  'exit-timeout-secs': { value: '<seconds>', help: 'On SIGTERM or SIGINT, how long in-flight requests may take to finish (default 30).' },
  id: { value: '<string>', help: "The server's identifier, the name its metadata reports (default triton, as Triton)." },
  'rate-limit': { value: '<off|execution_count>', help: "The rate limiter, as Triton's: execution_count runs an instance only once the resources of its instance group's rate_limiter block are free, by priority; off (the default) ignores those blocks." },
  'rate-limit-resource': {
    value: '<name>:<count>[:<device>]',
    help: 'How many copies of a rate limiter resource there are, on one device or (without one) on each; repeatable. Without any, each resource has the most one instance needs.',
  },
  'model-load-thread-count': { value: '<count>', help: 'How many model versions load at once (default 4, as Triton; 0 counts as 1).' },
  'model-load-retry-count': { value: '<count>', help: "How many times a model version's failed load is tried again before the load fails (default 0, as Triton)." },
  'strict-readiness': { value: '<boolean>', help: 'true (default): ready only while every model asked for is ready; false: ready whenever the server is live, whatever its models.' },
  'max-instances-per-model': { value: '<count>', help: "The most instances one model version may have, all its instance groups together; a config asking for more fails to load (default 64)." },
  'allow-http': { value: '<boolean>', help: 'Serve HTTP/REST (default true).' },
  'http-address': { value: '<address>', help: 'The address HTTP listens on (default 0.0.0.0).' },
  'http-port': { value: '<port>', help: 'The HTTP port (default 8000; 0 picks a free one).' },
  'http-max-input-size': { value: '<bytes>', help: 'The largest HTTP request body accepted, by the HTTP service and the OpenAI one (default 64 MiB, as Triton).' },
  'http-restricted-api': { value: '<api>,...:<key>=<value>', help: `Only requests with header <key>: <value> may call these APIs (others get 403); repeatable, an API in one group only. APIs: ${RESTRICTED_CATEGORIES.join(', ')}.` },
  'allow-grpc': { value: '<boolean>', help: 'Serve gRPC (default true).' },
  'grpc-address': { value: '<address>', help: 'The address gRPC listens on (default 0.0.0.0).' },
  'grpc-port': { value: '<port>', help: 'The gRPC port (default 8001; 0 picks a free one).' },
  'grpc-max-input-size': { value: '<bytes>', help: "Tritium's own: the largest gRPC message received (default 64 MiB, as HTTP's; Triton takes up to 2 GiB)." },
  'openai-port': { value: '<port>', help: "Serve OpenAI's API (/v1/models, /v1/completions, /v1/chat/completions, /v1/embeddings) on this port, at --http-address (Triton's OpenAI frontend; off unless given; 0 picks a free one). docs/openai.md." },
  'openai-chat-template': { value: '<file>', help: "A Jinja chat template for every model's /v1/chat/completions, before the models' own (Triton's --chat-template)." },
  'openai-default-max-tokens': { value: '<count>', help: 'max_tokens for OpenAI requests that give none (default 16, as Triton).' },
  'allow-client-shm': { value: '<boolean>', help: 'Let clients register and unregister shared-memory regions, over HTTP and gRPC (default false, as Triton).' },
  'grpc-restricted-protocol': { value: '<protocol>,...:<key>=<value>', help: 'Only calls with metadata triton-grpc-protocol-<key>: <value> may call these protocols (others get UNAVAILABLE); repeatable, as --http-restricted-api.' },
  'allow-metrics': { value: '<boolean>', help: 'Collect and serve Prometheus metrics (default true).' },
  'metrics-address': { value: '<address>', help: 'The address the metrics service listens on (default: --http-address).' },
  'metrics-port': { value: '<port>', help: 'The metrics port (default 8002; 0 picks a free one).' },
  'metrics-config': { value: '<setting>=<value>', help: 'counter_latencies, summary_latencies or histogram_latencies =true|false; repeatable.' },
  'cache-config': { value: '<cache>,<setting>=<value>', help: 'The response cache: local,size=<bytes>, or redis,host=<host> with redis,port=<port> (and redis,password=, redis,socket_timeout=<ms>); repeatable.' },
  'backend-config': {
    value: '<backend>,<setting>=<value>',
    help:
      "A backend's setting, or <setting>=<value> for every backend; repeatable. python,interpreter=<path>: the interpreter of Python models without an EXECUTION_ENV_PATH (default python3 on PATH); " +
      "python,execution-env-root=<dir>: a directory where a model's EXECUTION_ENV_PATH may lie besides its own model directory; python,stub-timeout-seconds=<s>: how long a stub may take to start (default 60); " +
      "python,shm-default-byte-size=<bytes> and python,shm-growth-byte-size=<bytes>: the first size and the growth step of the stubs' shared memory; onnxruntime,default-max-batch-size=<n>: the max_batch_size auto-complete gives (default 4). " +
      "Triton's other settings are accepted and ignored, with a warning.",
  },
  'log-verbose': { value: '<level>', help: 'Verbose logging at levels >= 1 (default 0: off).' },
  'log-info': { value: '<boolean>', help: 'Information messages (default true).' },
  'log-warning': { value: '<boolean>', help: 'Warnings (default true).' },
  'log-error': { value: '<boolean>', help: 'Errors (default true).' },
  'log-format': { value: '<default|ISO8601>', help: 'Log line prefix: default is "LMMDD hh:mm:ss.uuuuuu pid", ISO8601 is "YYYY-MM-DDThh:mm:ssZ L".' },
  'log-file': { value: '<path>', help: 'Append log lines to this file instead of standard error.' },
  'trace-config': {
    value: '[<mode>,]<setting>=<value>',
    help:
      "Request tracing, as Triton's; repeatable. level=<OFF|TIMESTAMPS|TENSORS>, rate=<n> (one request in n, default 1000), count=<n> (-1: no limit), mode=<triton|opentelemetry>. " +
      'Mode triton writes a JSON file: triton,file=<path>, triton,log-frequency=<n> (every n traces to <path>.<index>). ' +
      'Mode opentelemetry exports spans over OTLP/HTTP: opentelemetry,url=<endpoint> (default http://localhost:4318/v1/traces), opentelemetry,resource=<key>=<value>, ' +
      'opentelemetry,bsp_max_queue_size=<n>, opentelemetry,bsp_schedule_delay=<ms>, opentelemetry,bsp_max_export_batch_size=<n>.',
  },
};

/** Other names Triton gives a flag. */
export const ALIASES: Readonly<Record<string, string>> = { 'model-store': 'model-repository' };

/** A flag accepted only at the value that describes tritium's own behaviour. */
export interface FixedFlag {
  /** The accepted value, compared as Triton reads the flag's type (booleans: true/on/1, false/off/0). */
  readonly accepts: boolean | string;
  readonly why: string;
}

export const FIXED: Readonly<Record<string, FixedFlag>> = {
  'model-namespacing': { accepts: false, why: 'a model name must be unique across all repositories' },
  'reuse-http-port': { accepts: false, why: 'ports are not shared between processes' },
  'reuse-grpc-port': { accepts: false, why: 'ports are not shared between processes' },
  'grpc-use-ssl': { accepts: false, why: 'gRPC has no TLS here: terminate TLS in front of tritium (an ingress or a sidecar)' },
  'grpc-use-ssl-mutual': { accepts: false, why: 'gRPC has no TLS here: terminate TLS in front of tritium (an ingress or a sidecar)' },
  'grpc-infer-response-compression-level': { accepts: 'none', why: 'gRPC responses are not compressed' },
  'allow-sagemaker': { accepts: false, why: 'there is no SageMaker endpoint' },
  'allow-vertex-ai': { accepts: false, why: 'there is no Vertex AI endpoint' },
};

const NODE_LOOP = 'requests are handled on the Node.js event loop and models run on their own instances (worker threads, stub processes)';
const NO_POOLS = 'tritium keeps no pinned or CUDA memory pools of its own';
const SCRAPED = 'metrics are read when scraped, so a metric turned on costs nothing between scrapes';
const BACKENDS_ARE_PACKAGES = 'backends are npm packages found by name, not shared libraries in a directory; a model whose backend is missing is UNAVAILABLE, saying so';

/** Flags accepted and ignored, with why ignoring them is harmless. */
export const IGNORED: Readonly<Record<string, string>> = {
  'http-thread-count': NODE_LOOP,
  'buffer-manager-thread-count': NODE_LOOP,
  'pinned-memory-pool-byte-size': NO_POOLS,
  'cuda-memory-pool-byte-size': NO_POOLS,
  'cuda-virtual-address-size': NO_POOLS,
  'min-supported-compute-capability': NO_POOLS,
  'metrics-interval-ms': SCRAPED,
  'allow-cpu-metrics': SCRAPED,
  'allow-gpu-metrics': SCRAPED,
  'backend-directory': BACKENDS_ARE_PACKAGES,
  'cache-directory': 'the local and Redis caches are built in',
};

const TRACE_DEPRECATED = 'it is deprecated in Triton: use --trace-config';
const GRPC_CHANNEL = "gRPC channel settings are @grpc/grpc-js's defaults";
const NO_HEADERS = 'headers are not forwarded to models';

/** Triton flags refused, with why. */
export const UNSUPPORTED: Readonly<Record<string, string>> = {
  'disable-auto-complete-config': 'model configs are always auto-completed where a backend can',
  'strict-model-config': 'model configs are always auto-completed where a backend can',
  'response-cache-byte-size': 'it is deprecated in Triton: use --cache-config local,size=<bytes>',
  'repoagent-directory': 'repository agents are not shared libraries here: the checksum agent is built in, others are handed to the server (ServerOptions.repositoryAgents)',
  'host-policy': 'host policies are not implemented',
  'model-load-gpu-limit': 'GPU memory limits are not implemented',
  'http-header-forward-pattern': NO_HEADERS,
  'grpc-header-forward-pattern': NO_HEADERS,
  'grpc-server-cert': 'gRPC has no TLS here',
  'grpc-server-key': 'gRPC has no TLS here',
  'grpc-root-cert': 'gRPC has no TLS here',
  'grpc-infer-allocation-pool-size': GRPC_CHANNEL,
  'grpc-keepalive-time': GRPC_CHANNEL,
  'grpc-keepalive-timeout': GRPC_CHANNEL,
  'grpc-keepalive-permit-without-calls': GRPC_CHANNEL,
  'grpc-http2-max-pings-without-data': GRPC_CHANNEL,
  'grpc-http2-min-recv-ping-interval-without-data': GRPC_CHANNEL,
  'grpc-http2-max-ping-strikes': GRPC_CHANNEL,
  'grpc-max-connection-age': GRPC_CHANNEL,
  'grpc-max-connection-age-grace': GRPC_CHANNEL,
  'trace-file': TRACE_DEPRECATED,
  'trace-level': TRACE_DEPRECATED,
  'trace-rate': TRACE_DEPRECATED,
  'trace-count': TRACE_DEPRECATED,
  'trace-log-frequency': TRACE_DEPRECATED,
  'sagemaker-port': 'there is no SageMaker endpoint',
  'sagemaker-safe-port-range': 'there is no SageMaker endpoint',
  'sagemaker-thread-count': 'there is no SageMaker endpoint',
  'vertex-ai-port': 'there is no Vertex AI endpoint',
  'vertex-ai-thread-count': 'there is no Vertex AI endpoint',
  'vertex-ai-default-model': 'there is no Vertex AI endpoint',
};
