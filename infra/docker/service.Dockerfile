# One Dockerfile for all four services: they share the workspace and differ only in which
# package starts. Build from the repository root:
#   docker build -f infra/docker/service.Dockerfile --build-arg SERVICE=gateway -t crm/gateway .
# (Untested here: this machine has no Docker engine.)
ARG NODE_VERSION=20-bookworm-slim

FROM node:${NODE_VERSION} AS deps
WORKDIR /app
RUN npm install -g pnpm@10.34.8
COPY pnpm-lock.yaml pnpm-workspace.yaml package.json tsconfig.base.json ./
COPY packages ./packages
COPY services ./services
COPY infra ./infra
COPY scripts ./scripts
COPY bench/package.json ./bench/package.json
COPY e2e/package.json ./e2e/package.json
# postinstall generates the Prisma clients and compiles every service to dist/ (scripts/build.mjs).
RUN pnpm install --frozen-lockfile

FROM node:${NODE_VERSION} AS runtime
ARG SERVICE
ENV NODE_ENV=production SERVICE=${SERVICE} HOST=0.0.0.0
WORKDIR /app
COPY --from=deps --chown=node:node /app /app
USER node
# Each service answers /healthz without credentials.
HEALTHCHECK --interval=10s --timeout=3s --retries=5 CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"
# One node process running the compiled service: no package manager or transpiler in between
# (scripts/start-service.sh sets the runtime flags the memory figures were measured with, then execs node).
CMD ["sh", "-c", "exec sh scripts/start-service.sh services/$SERVICE"]
