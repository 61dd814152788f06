# Production image: compiled gateway, production dependencies only, running as a non-root user.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY mappings ./mappings
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY config ./config
RUN mkdir -p /var/lib/reseller-gateway && chown node:node /var/lib/reseller-gateway
USER node
ENV AUDIT_LOG_FILE=/var/lib/reseller-gateway/audit.log KEYS_FILE=/var/lib/reseller-gateway/keys.json
EXPOSE 3000
STOPSIGNAL SIGTERM
CMD ["node", "--enable-source-maps", "dist/bin/gateway.js"]
