# The function's image, built from a context that holds mlops-fn-krm (./krm:
# the KRM function alone, without hydrate's kustomize) and krm/etc: `make
# image` lays it out in bin/image, GoReleaser (.goreleaser.yaml) in its own,
# one build per platform. No network, no build argument: a plain `docker
# build --platform` makes each. Static binary, no shell, non-root.
FROM scratch
# The binary first: each platform's layers then differ from the first, so
# the classic builder's cache never hands one platform's layer to another.
COPY mlops-fn-krm /usr/local/bin/mlops-fn
# kustomize runs functions with --user nobody: Docker needs the name in /etc/passwd.
COPY krm/etc/passwd krm/etc/group /etc/
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/mlops-fn"]
