# syntax=docker/dockerfile:1
# The gateway as an image. Build stage: every dependency, the generators, the console (Vite -> console/dist/) and tsc
# (npm run build -> dist/). Runtime stage: production dependencies, dist/, console/dist/ and prisma/ (migrations),
# run by the unprivileged `node` user.
# compose.yaml runs two instances on PostgreSQL behind one port; test/container.test.ts replays both stages here.

FROM node:24-bookworm-slim AS build
WORKDIR /app
# What npm ci's postinstall (scripts/generate.mjs) reads, copied first: a change of src/ alone reuses this layer.
COPY package.json package-lock.json prisma.config.ts codegen.ts schema.graphql ./
COPY scripts/generate.mjs scripts/build.mjs scripts/bundle-server.mjs scripts/build-console.mjs scripts/
COPY prisma/ prisma/
COPY src/api/legacy/operations/ src/api/legacy/operations/
RUN --mount=type=cache,target=/root/.npm npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY console/ console/
COPY src/ src/
RUN npm run build

FROM node:24-bookworm-slim AS runtime
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
# Production dependencies only. --ignore-scripts: the postinstall would run the generators (devDependencies), and
# Prisma's would fetch a native engine nobody uses (migrations run on the WebAssembly one); the generated client
# is compiled into dist/.
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --ignore-scripts
# Read at run time by migrate and MIGRATE_ON_START (dist/db/migrations.js looks in ../../prisma, as src/db/ does).
COPY prisma/ prisma/
COPY --from=build /app/dist/ dist/
# Read at run time by the console's plugin (dist/edge/console/assets.js looks in ../../../console/dist).
COPY --from=build /app/console/dist/ console/dist/
# Owns nothing in /app: the image is read-only to the gateway. AUTH is on by default with DATABASE_URL, which a
# non-loopback HOST requires; without DATABASE_URL the gateway refuses to start and says why.
USER node
ENV HOST=0.0.0.0 PORT=4000
EXPOSE 4000
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + process.env.PORT + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/server/main.js", "serve"]
