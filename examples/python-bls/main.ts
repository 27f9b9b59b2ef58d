/**
 * Business logic scripting (BLS): a Python `pipeline` model calls two other models
 * through the server (pb_utils.InferenceRequest.async_exec): `embed` twice at once
 * (query and document), then `score`, and decides relevance from the similarity.
 * All three are Triton Python models, served unmodified.
 * Run: npx -y pnpm@10.34.9 example:python-bls
 */
import { fileURLToPath } from 'node:url';
import { InferenceServer } from '@tritium/core';
import { pythonBackend } from '@tritium/backend-python';

const repository = fileURLToPath(new URL('./models/', import.meta.url));
const server = await InferenceServer.start({ modelRepository: repository, backends: [pythonBackend()] });

try {
  for (const entry of await server.repositoryIndex()) console.log(`${entry.name} v${entry.version}: ${entry.state}`);
  const query = 'how do I reset my password';
  const documents = ['To reset your password, open settings and choose reset password', 'Our office is closed on public holidays'];
  for (const document of documents) {
    const answer = await server.infer('pipeline', {
      inputs: { QUERY: { datatype: 'BYTES', shape: [1, 1], data: [query] }, DOCUMENT: { datatype: 'BYTES', shape: [1, 1], data: [document] } },
    });
    const score = (answer.outputs.SCORE!.data as Float32Array)[0]!;
    const relevant = (answer.outputs.RELEVANT!.data as Uint8Array)[0] === 1;
    console.log(`score ${score.toFixed(3)} ${relevant ? 'relevant' : 'not relevant'}: ${document}`);
  }
  for (const name of ['pipeline', 'embed', 'score']) {
    const stats = server.statistics(name).model_stats[0]!;
    console.log(`${name}: ${stats.inference_count} inferences`);
  }
} finally {
  await server.stop();
}
