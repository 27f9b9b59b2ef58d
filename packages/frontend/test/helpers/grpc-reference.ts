import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Triton's own .proto files (reference data beside the repository, see ../shared/conformance/README.md). */
export const REFERENCE_PROTOS = fileURLToPath(new URL('../../../../../shared/conformance/protocol/', import.meta.url));

/** Why the reference protos cannot be read here, or undefined when they can. */
export const referenceMissing: string | undefined = existsSync(`${REFERENCE_PROTOS}grpc_service.proto`)
  ? undefined
  : `Triton's reference protos are not at ${REFERENCE_PROTOS}`;
if (referenceMissing) console.warn(`skipping the tests against Triton's protos: ${referenceMissing}`);
