# The platform daemons in one image. Build: `docker build -t platform .`; run a daemon by its bin, e.g.
# `docker run platform platform-apiserver --help`. See docs/operations.md.
FROM node:20-bookworm-slim AS build
# better-sqlite3 (the embedded store) is built from source.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/platform
COPY . .
RUN npm ci && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /opt/platform
COPY --from=build /opt/platform/package.json /opt/platform/package-lock.json ./
COPY --from=build /opt/platform/node_modules ./node_modules
COPY --from=build /opt/platform/packages ./packages
ENV PATH=/opt/platform/node_modules/.bin:$PATH
USER node
ENTRYPOINT []
CMD ["platform-apiserver", "--help"]
