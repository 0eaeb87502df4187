# The function's image: `make image` builds bin/mlops-fn-krm (./krm: the KRM
# function alone, without hydrate's kustomize) and the user files first, so
# the build needs no network. Static binary, no shell, non-root.
FROM scratch
# kustomize runs functions with --user nobody: Docker needs the name in /etc/passwd.
COPY bin/image/passwd /etc/passwd
COPY bin/image/group /etc/group
COPY bin/mlops-fn-krm /usr/local/bin/mlops-fn
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/mlops-fn"]
