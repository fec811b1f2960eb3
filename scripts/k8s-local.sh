#!/usr/bin/env bash
# k8s-local.sh: a one-node Kubernetes cluster on loopback for the kubernetes
# sandbox backend (issue 33). Everything it builds or runs lives outside git:
#   build cache  $MASS_K8S_CACHE/<version>/bin   (kube-apiserver, kube-controller-manager,
#                                                 kube-scheduler, kubelet, kubectl)
#   state        $MASS_K8S_STATE                 (certs, etcd data, containerd root, logs)
# The cluster has its own containerd (own socket, root and state dirs); Docker's
# containerd and dockerd are never touched.
#
#   scripts/k8s-local.sh build    build (cached) the cluster binaries from the Go module proxy
#   scripts/k8s-local.sh up       build, install Debian packages, start everything, wait ready
#   scripts/k8s-local.sh status   what runs, node readiness
#   scripts/k8s-local.sh down     stop every process this script started (by pid file)
#   scripts/k8s-local.sh load IMG import a Docker image into the cluster's containerd
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-v1.34.4}
CACHE=${MASS_K8S_CACHE:-/var/cache/mass-k8s}
STATE=${MASS_K8S_STATE:-/var/lib/mass-k8s}
RUN=${MASS_K8S_RUN:-/run/mass-k8s}
BIN=$CACHE/$K8S_VERSION/bin
GVISOR_SHIM=${GVISOR_SHIM:-/usr/local/bin/containerd-shim-runsc-v1}
API_PORT=${MASS_K8S_API_PORT:-16443}
ETCD_PORT=${MASS_K8S_ETCD_PORT:-12379}
ETCD_PEER_PORT=$((ETCD_PORT + 1))
CTR_SOCK=$RUN/containerd/containerd.sock
KUBECONFIG_ADMIN=$STATE/admin.kubeconfig
NODE_NAME=${MASS_K8S_NODE:-mass-node-0}
SERVICE_CIDR=10.233.0.0/24
POD_CIDR=10.234.0.0/24

log() { printf '%s k8s-local: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# --- build -----------------------------------------------------------------

# build_mod writes a throwaway module that requires k8s.io/kubernetes and
# replaces each staging module (./staging/src/k8s.io/X in its go.mod) by the
# published k8s.io/X at the matching v0 version, so the go command can build
# the commands from the module proxy.
build_mod() {
	local dir=$1 minor staging
	minor=${K8S_VERSION#v1.}
	staging=v0.$minor
	mkdir -p "$dir"
	local kmod
	kmod=$(cd "$dir" && GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$K8S_VERSION" |
		sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
	[ -f "$kmod" ] || die "no go.mod for k8s.io/kubernetes@$K8S_VERSION"
	{
		echo "module mass.local/k8sbuild"
		echo
		sed -n '/^go /p;/^godebug /p' "$kmod"
		echo
		echo "require k8s.io/kubernetes $K8S_VERSION"
		echo
		# the require blocks, as kubernetes pins them
		sed -n '/^require (/,/^)/p' "$kmod"
		echo
		echo "replace ("
		sed -n 's#^\t\(k8s.io/[a-z0-9-]*\) => ./staging/src/k8s.io/.*#\t\1 => \1 '"$staging"'#p' "$kmod"
		echo ")"
	} >"$dir/go.mod"
	printf 'package main\n\nimport (\n' >"$dir/tools.go"
	for c in kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl; do
		printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "$c" >>"$dir/tools.go"
	done
	printf ')\n\nfunc main() {}\n' >>"$dir/tools.go"
}

cmd_build() {
	local want=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl)
	local missing=0
	for c in "${want[@]}"; do [ -x "$BIN/$c" ] || missing=1; done
	if [ $missing = 0 ]; then log "binaries cached in $BIN"; return 0; fi
	local src=$CACHE/$K8S_VERSION/src t0
	t0=$(date +%s)
	build_mod "$src"
	local minor=${K8S_VERSION#v1.} ldf
	minor=${minor%%.*}
	ldf="-s -w"
	for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		ldf="$ldf -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
		ldf="$ldf -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
	done
	mkdir -p "$BIN.tmp"
	log "building ${want[*]} $K8S_VERSION into $BIN (cold: tens of minutes on 2 cores)"
	(cd "$src" && CGO_ENABLED=0 GOFLAGS=-mod=mod nice -n 10 go build -trimpath -tags providerless \
		-ldflags "$ldf" -o "$BIN.tmp/" \
		k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
		k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kubectl)
	rm -rf "$BIN" && mv "$BIN.tmp" "$BIN"
	log "built in $(($(date +%s) - t0))s"
}

case "${1:-}" in
build) cmd_build ;;
*) echo "usage: $0 build|up|down|status|load IMAGE" >&2; exit 2 ;;
esac
