FROM node:22-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
COPY libs ./libs
COPY services ./services
COPY cli ./cli
COPY migrations ./migrations
RUN npm ci --omit=dev --no-audit --no-fund
ENV NODE_ENV=production
ENTRYPOINT ["node", "cli/bin/herald.js"]
CMD ["up"]
