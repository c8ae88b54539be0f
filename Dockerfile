# syntax=docker/dockerfile:1
#
# joust as a container: a build stage with the Rust toolchain, and a slim runtime stage with only
# the binary. The runtime image has no PostgreSQL server, so it needs DATABASE_URL (see
# docker-compose.yml); the embedded Postgres is for running joust directly on a machine.

FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
# Cache mounts keep the crate registry and compiled dependencies between builds; the binary is
# copied out because the target directory is a cache, not part of the image.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked --bin joust \
    && install -m 0755 target/release/joust /usr/local/bin/joust

FROM debian:bookworm-slim AS runtime
# An unprivileged user owning the data directory; nothing in the container runs as root.
RUN useradd --system --user-group --home-dir /var/lib/joust --shell /usr/sbin/nologin joust \
    && mkdir -p /var/lib/joust \
    && chown joust:joust /var/lib/joust
COPY --from=build /usr/local/bin/joust /usr/local/bin/joust
USER joust
WORKDIR /var/lib/joust
ENV JOUST_LISTEN=0.0.0.0:8080 \
    JOUST_DATA_DIR=/var/lib/joust
EXPOSE 8080
VOLUME ["/var/lib/joust"]
ENTRYPOINT ["joust", "serve"]
