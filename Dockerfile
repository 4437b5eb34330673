# Parley's production image. Stage 1 installs the runtime dependencies from the lockfile;
# stage 2 builds the dashboard (Vite, a dev dependency) into dist/ui; stage 3 holds only the
# runtime dependencies, the sources and that build, and runs as the unprivileged `node` user.
# Sources run through @swc-node/register exactly as `npm start` does.
FROM node:24-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM node:24-slim AS ui
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY ui ./ui
RUN npm run ui:build

FROM node:24-slim AS runtime
ENV NODE_ENV=production \
    PORT=3000 \
    PARLEY_DATA_DIR=/app/.parley
WORKDIR /app
COPY --from=deps --chown=node:node /app/node_modules ./node_modules
COPY --chown=node:node package.json tsconfig.json nest-cli.json ./
COPY --chown=node:node tools ./tools
COPY --chown=node:node bin ./bin
COPY --chown=node:node migrations ./migrations
COPY --chown=node:node libs ./libs
COPY --chown=node:node apps ./apps
COPY --from=ui --chown=node:node /app/dist/ui ./dist/ui
RUN mkdir -p /app/.parley && chown node:node /app/.parley
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The split apps use the same image with another entry file (see docker-compose.yml).
CMD ["node", "--max-semi-space-size=32", "-r", "./tools/register.js", "apps/server/src/main.ts"]
