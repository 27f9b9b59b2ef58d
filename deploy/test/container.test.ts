// The image built from the Dockerfile and run as the manifests say (deploy/container-check.mjs):
// minutes long, so in `pnpm test:deploy` (vitest.deploy.config.ts), not the default suite.
// Skips, with the script's reason, where podman or a base image or the network for the build is missing.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The script's exit status when the checks cannot run here. */
const CANNOT_RUN = 3;

it('builds the image with podman and checks what the Kubernetes and KServe manifests promise', async (context) => {
  const child = spawn(process.execPath, ['deploy/container-check.mjs'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  for (const stream of [child.stdout, child.stderr]) {
    stream.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      process.stdout.write(chunk);
    });
  }
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code === CANNOT_RUN) {
    context.skip(output.trim().split('\n').at(-1)!.replace(/^container-check: /, ''));
  }
  expect(code, output).toBe(0);
});
