# mass — run `make help` for the targets.
SHELL := /bin/bash
GO ?= go
BIN := bin
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)
# Packages whose code runs concurrently; `check` runs them under -race.
RACE_PKGS := ./daemon/... ./agents/... ./sandbox/...

.PHONY: help setup build test check demo image image-research test-research kernels bench gpu-check layers clean k8s-test

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

setup: ## install apt packages and Go modules (root; idempotent)
	bash scripts/setup-host.sh

build: ## build massd, massctl, mass-train (and mass-train-cuda), the static sandbox helper, probe and egress proxy into ./bin
	@mkdir -p $(BIN)
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/...
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN)/ ./sandbox/helper/cmd/mass-sandbox-helper ./sandbox/probe/cmd/mass-probe ./sandbox/egress/cmd/mass-egress-proxy
	@# The CUDA trainer links libcuda (nvidia-cuda-dev); massd prefers it when a GPU is present.
	@if [[ -f /usr/include/cuda.h ]]; then \
		echo "$(GO) build -tags masscuda -o $(BIN)/mass-train-cuda ./cmd/mass-train"; \
		$(GO) build -tags masscuda -ldflags '$(LDFLAGS)' -o $(BIN)/mass-train-cuda ./cmd/mass-train; \
	fi

test: setup build image ## run every test (real Docker, SQLite, torch reference; builds the sandbox images first)
	bash scripts/test.sh

check: ## gofmt, go vet, staticcheck, -race on concurrent packages
	bash scripts/check.sh

demo: setup build image ## start massd and run an example episode end to end
	bash scripts/demo.sh

image: build ## build the sandbox images (agent image via debootstrap, test image from busybox-static)
	$(BIN)/massctl image build --all

image-research: build ## build the research image profile (pip, venv, git, gcc, torch, ...; ~2.4 GB, ~25 min; not part of test)
	$(BIN)/massctl image build --profile research

test-research: build ## the research-profile box test: torch loop, pip through the egress proxy (needs image-research)
	$(GO) test -count=1 -v -run 'TestResearchBox' ./agents/episode/

kernels: ## compile cuda/*.cu to embedded PTX (needs nvcc)
	bash scripts/kernels.sh

bench: build image ## run the benchmarks and print their tables
	bash scripts/bench.sh

k8s-test: build image ## build (cached) and start a local Kubernetes cluster, then the kubernetes backend's conformance suite, probes and latency (not in test)
	bash scripts/k8s-test.sh

gpu-check: ## on a GPU host: kernels vs Go references, CPU-vs-CUDA parity, tokens/s and MFU
	bash scripts/gpu-check.sh

layers: ## print the layer table (go list -deps): imports into daemon/ per wing, SQLite, what each binary links
	bash scripts/layers.sh

clean: ## remove build outputs
	rm -rf $(BIN) out
