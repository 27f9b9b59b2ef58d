import { fork } from 'node:child_process';
const setup = { httpEcho: 1, http: 18100, grpcEcho: 1, grpc: 18101, proto: 'packages/frontend/proto/grpc_service.proto', model: 'tiny', elements: 1, sharedMemoryKey: '/x' };
const child = fork('bench/frontend-client.ts', [JSON.stringify(setup)], { execArgv: ['--import', 'tsx'] });
const run = (target: string, calls: number, concurrency: number) => new Promise<any>((res) => { child.once('message', res); child.send({ target, calls, concurrency }); });
for (const t of process.argv[2]!.split(',')) { const r = await run(t, 20000, 64); console.log(t, Math.round(r.requestsPerSecond), r.p50, r.error ?? ''); }
child.disconnect();
