# Keyhive's container image: the static binary packaging/build.sh builds, on
# an empty base, run as a non-root user (65532), its data in the /data volume.
#
#   docker build -t keyhive .
#   docker run -d --name keyhive -p 6379:6379 -v keyhive-data:/data keyhive
#   docker run -d -p 6379:6379 keyhive --dir /data --bind "* -::*" --requirepass secret --maxmemory 1gb
#
# Arguments after the image name are keyhive's (redis-server's command line).
# The default ones listen on every interface of the container and turn
# protected mode off, as the redis image does: the container's network is the
# boundary, so publish the port only where clients may reach it, or set
# --requirepass (arguments given replace them all: keep --dir /data, without
# which the data stays in memory, and --bind). docs/operations.md has more.

# The Go release is go.mod's (packaging's test checks they agree).
FROM golang:1.26.8 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
# The context includes .git, so go build records the commit (keyhive --version).
COPY . .
RUN packaging/build.sh /out/keyhive && mkdir /out/data

FROM scratch
COPY --from=build /out/keyhive /usr/local/bin/keyhive
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
WORKDIR /data
VOLUME /data
EXPOSE 6379
# keyhive --ping exits 0 when the server answers PING (or NOAUTH).
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s CMD ["/usr/local/bin/keyhive", "--ping", "127.0.0.1:6379"]
ENTRYPOINT ["/usr/local/bin/keyhive"]
CMD ["--dir", "/data", "--bind", "* -::*", "--protected-mode", "no"]
