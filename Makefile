# mlops-fn: `make build test` is what CI runs (see .ci/run and the README).
GO      ?= go
BIN     := bin/mlops-fn
KRM_BIN := bin/mlops-fn-krm
IMAGE   ?= localhost/mlops-fn:dev
OVERLAYS := $(sort $(dir $(wildcard quickstart/k8s/mlops/*/job.yaml examples/*/job.yaml examples/*/*/job.yaml)))

.PHONY: build test golden-update hydrate lint fuzz vuln image dist dist-test bench e2e clean

# bin/mlops-fn is the full command; bin/mlops-fn-krm, the KRM function alone
# (./krm), is what the image runs.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags='-s -w' -o $(BIN) ./fn/mlops-fn
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags='-s -w' -o $(KRM_BIN) ./krm

# Unit, golden and kustomize-equivalence tests, the drift check of the
# hydrated overlays, and the lint. Under load pkg/hydrate's tests took 9 min (2 min idle, in
# parallel since 2026-11-28): go test's default timeout (10 min) is too near.
test: build lint
	$(GO) test -timeout 20m ./...
	./$(BIN) hydrate --check $(OVERLAYS)

# Rewrites testdata/*/expected.yaml and stderr.txt from the current output:
# read `git diff testdata` before committing.
golden-update:
	$(GO) test ./fn -run 'TestGolden|TestDocsKeyTable|TestDocsAreComplete' -update

# Regenerates the hydrated overlays from their job.yaml and mlops.env.
hydrate: build
	./$(BIN) hydrate $(OVERLAYS)

# gofmt, an SPDX header on every Go file, go vet, and golangci-lint (pinned in .ci/run) when it is installed.
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@out=$$(grep -L 'SPDX-License-Identifier: Apache-2.0' $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "no SPDX licence header:"; echo "$$out"; exit 1; fi
	$(GO) vet -tags e2e ./...
	@if command -v golangci-lint >/dev/null; then golangci-lint run ./...; else echo "golangci-lint not installed: skipped (.ci/run installs v2.6.2)"; fi

# Each fuzz target for FUZZTIME (CI: a short pass). New findings land in
# pkg/*/testdata/fuzz and fail the ordinary tests until fixed.
FUZZTIME ?= 1m
fuzz:
	$(GO) test ./pkg/env -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME)
	$(GO) test ./pkg/processor -run '^$$' -fuzz '^FuzzProcess$$' -fuzztime $(FUZZTIME)
	$(GO) test ./pkg/processor -run '^$$' -fuzz '^FuzzDecodeSpec$$' -fuzztime $(FUZZTIME)

# Known vulnerabilities reachable from the code: vuln.go.dev, else the offline
# copy in ../shared/vulndb (hack/vuln.sh); a finding fails.
vuln:
	hack/vuln.sh

# FROM scratch, with bin/mlops-fn-krm: the KRM function only (docs/performance.md).
# The context is laid out as GoReleaser lays out the release's: the binary,
# and krm/etc (the users kustomize and kpt run as, named in /etc/passwd).
image: build
	rm -rf bin/image && mkdir -p bin/image/krm
	cp $(KRM_BIN) bin/image/ && cp -R krm/etc bin/image/krm/
	docker build -t $(IMAGE) -f Dockerfile bin/image

# The release a tag makes, built here with nothing published (.goreleaser.yaml):
# bin/dist holds the archives, checksums.txt, the SBOMs, and Docker the images.
# Needs GoReleaser and syft (pinned as in .github/workflows/ci.yaml) and a
# Docker daemon; it is not part of make test (see docs/development.md).
GORELEASER ?= goreleaser
dist:
	@command -v $(GORELEASER) >/dev/null && command -v syft >/dev/null || { echo "make dist needs goreleaser and syft on PATH: go install github.com/goreleaser/goreleaser/v2@v2.15.1 && go install github.com/anchore/syft/cmd/syft@v1.57.1" >&2; exit 1; }
	$(GORELEASER) release --snapshot --clean

# make dist, then checks its artefacts (hack/dist, build tag dist): each
# archive's binary is of its platform, the linux/amd64 one says its version,
# each image holds the function of its platform, and the image renders the
# quickstart as the binary does. Skips, saying so, without goreleaser or Docker.
dist-test:
	$(GO) test -tags dist -count=1 -timeout 30m -v ./hack/dist

# The cost table against a pass-through kyaml function (docs/performance.md).
bench:
	$(GO) run ./bench

# Every overlay against a real control plane on 127.0.0.1: etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, mpi-operator, training-operator, Kubeflow Trainer,
# JobSet, Kueue and scheduler-plugins' gang scheduler, with kwok as a fake kubelet, and a real node (kubelet, containerd, runc, CNI,
# CoreDNS, images debootstrapped from Debian) on which jobs run real processes; pinned in
# hack/e2e/versions.env and built once into ~/.cache/mlops-fn/e2e by hack/e2e/build.sh (needs root, debootstrap
# and libseccomp-dev; its builds take about 29 min cold on 2 cores, a run 9 min warm on an idle machine, 2026-11-25); the checks are Go
# (hack/e2e/*_test.go, build tag e2e).
e2e: build
	hack/e2e/run.sh

clean:
	rm -rf bin
