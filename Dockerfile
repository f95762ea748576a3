# syntax=docker/dockerfile:1
# One image for every role: `docker run herald <command>` (ingress, worker, reviewer, scheduler,
# migrate, up). The final stage holds compiled JavaScript and production dependencies only.

FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.base.json tsconfig.package.json tsconfig.build.json ./
COPY libs ./libs
COPY services ./services
COPY cli ./cli
# The build bundles each role's code with esbuild (scripts/bundle.mjs).
COPY scripts ./scripts
# No install scripts: nothing the build or the roles need compiles natively (better-sqlite3 is an
# optional dependency of the search benchmark only).
RUN npm ci --no-audit --no-fund --ignore-scripts
# The build compiles every package to dist/ and the web console to services/ingress/console/dist/,
# which the ingress serves at /ui/.
RUN npm run build \
 && npm prune --omit=dev --ignore-scripts --no-audit --no-fund \
 && rm -rf node_modules/better-sqlite3 scripts libs/*/src libs/*/test services/*/src services/*/test cli/src \
    services/ingress/console/src services/ingress/console/index.html services/ingress/console/vite.config.ts \
 && find libs services cli -name '.tsbuildinfo' -delete \
 && find libs services cli -name 'tsconfig*.json' -delete

FROM node:22-bookworm-slim
# tini is PID 1 so SIGTERM reaches node and the graceful shutdown runs (node as PID 1 ignores
# signals it has no handler for, and nothing reaps zombies); bubblewrap sandboxes the terminal tool.
# chromium is what the browser tools drive (HERALD_CHROMIUM_PATH, /usr/bin/chromium); without it
# they are not offered. fonts-liberation gives its screenshots legible text.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini bubblewrap ca-certificates chromium fonts-liberation \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /var/lib/herald/workspaces \
 && chown -R node:node /var/lib/herald
WORKDIR /app
# A container's metrics are scraped from outside it: all interfaces here (loopback is the default).
ENV NODE_ENV=production \
    HERALD_WORKSPACE_ROOT=/var/lib/herald/workspaces \
    HERALD_METRICS_HOST=0.0.0.0
COPY --from=build --chown=root:root /app /app
COPY --chown=root:root migrations ./migrations
# Herald's built-in skills, seeded into every profile by `herald migrate` (BUILTIN_SKILLS_DIR).
COPY --chown=root:root skills ./skills
USER node
EXPOSE 8080 9464
ENTRYPOINT ["/usr/bin/tini", "--", "node", "--enable-source-maps", "cli/bin/herald.js"]
CMD ["up"]
