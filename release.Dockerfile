# The cachelab image: the release binary on distroless/static, as the
# nonroot user. goreleaser builds it (.goreleaser.yaml, dockers_v2), with
# the binary for each platform at $TARGETPLATFORM/cachelab in the build
# context; it is not for `docker build .` on the source tree.
#
#   docker run --rm IMAGE run add-update-delete
#
# cachelab needs no shell and no libc (it is built with CGO_ENABLED=0).
# Each run starts an embedded etcd in a new directory under $TMPDIR
# (over 100 MB, removed at the end of the run): /tmp is writable by every
# user in distroless, and HOME is the nonroot user's own directory, which
# is also where a run's --output files go.
FROM gcr.io/distroless/static-debian12:nonroot

ARG TARGETPLATFORM
COPY $TARGETPLATFORM/cachelab /usr/local/bin/cachelab

# 65532 is distroless's nonroot, by number so that a runtime that checks
# for a non-root user (Kubernetes' runAsNonRoot) can tell.
USER 65532:65532
ENV HOME=/home/nonroot TMPDIR=/tmp
WORKDIR /home/nonroot

ENTRYPOINT ["/usr/local/bin/cachelab"]
CMD ["--help"]
