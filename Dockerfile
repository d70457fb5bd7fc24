# syntax=docker/dockerfile:1
# gex: Generic Extractor-compatible extraction, config store and runner.
#   docker build -t gex .
#   docker run -e KBC_URL -e KBC_TOKEN -e KBC_CONFIGID gex    # KBC_TOKEN: a runner token, no master key
#   docker run -v "$PWD/data:/data" gex run --data-dir /data

# --- build: compile TypeScript, bundle the CLI, build the native SQLite addon, drop dev dependencies ---
FROM node:24-bookworm AS build
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
FROM node:24-bookworm-slim
# keep VERSION equal to package.json's version (test/docker checks it)
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="gex" \
      org.opencontainers.image.description="Generic Extractor-compatible REST extraction, a Keboola-compatible configuration store (gex serve) and a row runner" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.base.name="docker.io/library/node:24-bookworm-slim"
ENV NODE_ENV=production KBC_DATADIR=/data
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist/bundle ./dist/bundle
COPY --from=build /app/bin ./bin
RUN ln -s /app/bin/gex.js /usr/local/bin/gex && mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
# gex serve (PID 1, or under docker run --init) is healthy while GET /health on its --port answers 200,
# i.e. while its store answers; any other command (gex run) is a job, not a server: always healthy.
# node, not curl: the slim image has no curl
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "const a=require('fs').readFileSync('/proc/1/cmdline','utf8').split('\\0');const g=a.findIndex(x=>/(^|\\/)gex(\\.js)?$/.test(x));const w=a.slice(g+1);let c;for(let i=0;i<w.length;i++){if(w[i]==='--log-level'||w[i]==='--log-format')i++;else if(!w[i].startsWith('-')){c=w[i];break}}if(g<0||c!=='serve')process.exit(0);const i=w.findIndex(x=>x==='--port'||x.startsWith('--port='));const p=i<0?'8080':w[i].startsWith('--port=')?w[i].slice(7):w[i+1];fetch('http://127.0.0.1:'+p+'/health',{signal:AbortSignal.timeout(4000)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["gex"]
CMD ["run"]
