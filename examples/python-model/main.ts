/**
 * A Triton Python model served unmodified: a sentiment classifier that does its own
 * preprocessing (text → word counts → a linear layer → softmax). Twelve concurrent
 * callers send one review each; the dynamic batcher hands several to one execute().
 * The Python backend is loaded by name, as the config says `backend: "python"`.
 * Run: npx -y pnpm@10.34.9 example:python-model
 */
import { fileURLToPath } from 'node:url';
import { bytesElementToString, InferenceServer } from '@tritium/core';

const repository = fileURLToPath(new URL('./models/', import.meta.url));
const server = await InferenceServer.start({ modelRepository: repository });

try {
  for (const entry of await server.repositoryIndex()) console.log(`${entry.name} v${entry.version}: ${entry.state}`);
  const reviews = [
    'I love it, works great',
    'Terrible. Broken on arrival, the worst',
    'It arrived, it is okay',
    'excellent and fast, I recommend it',
    'boring and slow',
    'fine, as expected',
    'not good',
    'amazing! perfect!',
    'awful customer service',
    'average',
    'happy with it',
    'disappointing',
  ];
  const answers = await Promise.all(
    reviews.map((text) => server.infer('classifier', { inputs: { TEXT: { datatype: 'BYTES', shape: [1, 1], data: [text] } } })),
  );
  answers.forEach((answer, i) => {
    const label = bytesElementToString((answer.outputs.LABEL!.data as Uint8Array[])[0]!);
    const probabilities = Array.from(answer.outputs.PROBABILITIES!.data as Float32Array, (p) => p.toFixed(2)).join(' ');
    console.log(`${label.padEnd(8)} [${probabilities}]  ${reviews[i]}`);
  });
  const stats = server.statistics('classifier').model_stats[0]!;
  console.log(`statistics: ${stats.inference_count} inferences in ${stats.execution_count} executions`);
} finally {
  await server.stop();
}
