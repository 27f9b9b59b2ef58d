# syntax=docker/dockerfile:1
# The tritium command with the ONNX and Python backends (see docs/deployment.md).
#   docker build -t tritium .
#   docker run --rm -p 8000-8002:8000-8002 -v "$PWD/models:/models:ro" tritium
# NODE_IMAGE is the base of both stages: any Debian bookworm image with Node.js 20 (node, npm and
# npx on PATH). deploy/container-check.mjs passes one it makes offline with mmdebstrap.

ARG NODE_IMAGE=node:20-bookworm-slim

# Build: the workspace's packages, packed as a registry would serve them (with
# @tritium/native-addon, which builds backend-python's addon at install), then installed
# as a user would. cmake and g++ are here only: @tritium/backend-python's install script
# builds its shared-memory addon with them.
FROM ${NODE_IMAGE} AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends cmake g++ make python3 \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN npx -y pnpm@10.34.9 install --frozen-lockfile \
 && npx -y pnpm@10.34.9 build \
 && npx -y pnpm@10.34.9 --filter @tritium/batcher --filter @tritium/core --filter @tritium/backend-onnx \
      --filter @tritium/backend-python --filter @tritium/native-addon --filter @tritium/frontend \
      pack --pack-destination /packs
# The CPU binaries of onnxruntime-node ship in its package; its script would only fetch CUDA libraries.
ENV ONNXRUNTIME_NODE_INSTALL=skip
WORKDIR /opt/tritium
RUN npm init -y >/dev/null && npm install --omit=dev /packs/*.tgz

# Run: Node 20, and python3 with numpy for Python models; no compilers.
FROM ${NODE_IMAGE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-numpy \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /opt/tritium /opt/tritium
ENV PATH=/opt/tritium/node_modules/.bin:$PATH
# A numeric user, so Kubernetes' runAsNonRoot can check it.
RUN useradd --uid 1001 --user-group --no-create-home --shell /usr/sbin/nologin tritium
USER 1001
# HTTP/REST, gRPC, metrics: the command's default ports.
EXPOSE 8000 8001 8002
ENTRYPOINT ["tritium"]
CMD ["serve", "--model-repository", "/models"]
