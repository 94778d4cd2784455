# monapi-exporter: compiled JavaScript on Node.js 24 LTS, production dependencies only,
# running as an unprivileged user with a read-only root file system in mind.
#   docker build -t monapi-exporter .
#   docker buildx build --platform linux/amd64,linux/arm64 .    (.github/workflows/release.yml)
# scripts/image-build builds this same file with podman.

ARG NODE_IMAGE=docker.io/library/node:24-bookworm-slim

# The deps and build stages run on the building machine's own platform: what they make
# (JavaScript, and production dependencies installed without scripts, none of them a native
# addon) is the same for every target, so an arm64 image needs no emulated npm ci or tsc.
# scripts/image-test checks that node_modules holds no native addon.

# Production dependencies alone, so their layer survives source changes. What no running
# exporter reads goes (TypeScript sources and declarations, source maps, READMEs, the packages'
# own tests, examples and docs): 24 MB of node_modules become 11. Licence files stay.
FROM --platform=$BUILDPLATFORM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && find node_modules -type f \( -name '*.ts' -o -name '*.mts' -o -name '*.cts' -o -name '*.map' -o \( -iname '*.md' ! -iname 'licen[cs]e*' \) \) -delete \
 && find node_modules -type d \( -name test -o -name tests -o -name __tests__ -o -name example -o -name examples -o -name docs \) -prune -exec rm -rf {} +

FROM --platform=$BUILDPLATFORM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Peer dependencies are only the chart tests' (aws-cdk-lib for the helm binaries); tsc needs none.
RUN npm ci --omit=peer --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM ${NODE_IMAGE}
# An ARG declared before the first FROM is not visible inside a stage until declared again:
# without this line the base.name label below would be empty.
ARG NODE_IMAGE
# package.json's version (test/ship/release.test.ts keeps them equal); the release workflow
# passes the tag's version, the commit and the time. A plain build knows no commit or time.
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG CREATED=unknown
LABEL org.opencontainers.image.title="monapi-exporter" \
      org.opencontainers.image.description="Prometheus/OpenMetrics exporter for the Monitoring REST API and the Release Lookup API" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/monapi/monapi-exporter" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.base.name="${NODE_IMAGE}"
ENV NODE_ENV=production
WORKDIR /app
# Owned by root and not writable by the exporter's user: the code cannot be changed at run time.
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json LICENSE ./
# 65532 is the conventional "nonroot" id (distroless); numeric, so Kubernetes' runAsNonRoot can check it.
USER 65532:65532
EXPOSE 9866
# node itself is PID 1 and receives SIGTERM (npm start would swallow it); no HEALTHCHECK, Kubernetes uses probes.
ENTRYPOINT ["node", "--enable-source-maps", "dist/cli.js"]
CMD ["--config.file=/etc/monapi-exporter/config.yaml"]
