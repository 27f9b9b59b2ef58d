// A gRPC frontend in a process of its own, for tests that bound its memory (node
// --max-old-space-size) or must survive its death. Serves `bools` and `strings`: BOOL and
// BYTES [-1] identity models on the test backend. Prints "PORT <port>" once listening; stops on SIGTERM.
import { InferenceServer } from '@tritium/core';
import { startGrpcFrontend } from '@tritium/frontend';
import { TempRepository } from '../../../core/test/helpers/repository.js';
import { testBackend } from '../../../core/test/helpers/test-backend.js';

const BOOLS = `backend: "test"
input { name: "IN" data_type: TYPE_BOOL dims: [ -1 ] }
output { name: "OUT" data_type: TYPE_BOOL dims: [ -1 ] }`;

const STRINGS = `backend: "test"
input { name: "IN" data_type: TYPE_STRING dims: [ -1 ] }
output { name: "OUT" data_type: TYPE_STRING dims: [ -1 ] }`;

const repository = await TempRepository.create({ bools: { config: BOOLS }, strings: { config: STRINGS } });
const server = await InferenceServer.start({ modelRepository: repository.path, backends: [testBackend()] });
const frontend = await startGrpcFrontend(server, { host: '127.0.0.1', port: 0 });
process.stdout.write(`PORT ${frontend.port}\n`);

process.once('SIGTERM', async () => {
  await frontend.close();
  await server.stop();
  await repository.remove();
  process.exit(0);
});
