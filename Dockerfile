# syntax=docker/dockerfile:1
# gex: Generic Extractor-compatible extraction, config store and runner.
#   docker build -t gex .
#   docker run -e KBC_URL -e KBC_TOKEN -e KBC_CONFIGID gex
#   docker run -v "$PWD/data:/data" gex run --data-dir /data

# --- build: compile TypeScript, bundle the CLI, build the native SQLite addon, drop dev dependencies ---
FROM node:20-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
RUN npm ci --ignore-scripts && npm rebuild better-sqlite3
COPY src ./src
COPY test ./test
COPY bench ./bench
COPY scripts ./scripts
COPY bin ./bin
RUN npm run build && npm prune --omit=dev

# --- runtime: production dependencies and compiled code only, as a non-root user ---
FROM node:20-bookworm-slim
ENV NODE_ENV=production KBC_DATADIR=/data
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist/bundle ./dist/bundle
COPY --from=build /app/bin ./bin
RUN ln -s /app/bin/gex.js /usr/local/bin/gex && mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
ENTRYPOINT ["gex"]
CMD ["run"]
