FROM node:22-bookworm-slim
# bubblewrap: the sandbox terminal commands run in (docs/security.md). Without it the terminal and
# file tools are not offered.
RUN apt-get update \
  && apt-get install -y --no-install-recommends bubblewrap \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
COPY libs ./libs
COPY services ./services
COPY cli ./cli
COPY migrations ./migrations
RUN npm ci --omit=dev --no-audit --no-fund
# Session workspaces live here unless HERALD_WORKSPACE_ROOT says otherwise; owned by the user the
# platform runs as, never root.
RUN mkdir -p /var/lib/herald/workspaces && chown -R node:node /var/lib/herald
ENV NODE_ENV=production HERALD_WORKSPACE_ROOT=/var/lib/herald/workspaces
USER node
ENTRYPOINT ["node", "cli/bin/herald.js"]
CMD ["up"]
