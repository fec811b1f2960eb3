#!/usr/bin/env bash
# k8s-local.sh: a one-node Kubernetes cluster on loopback for the kubernetes
# sandbox backend (issue 33). Everything it builds or runs lives outside git:
#   build cache  $MASS_K8S_CACHE/<version>/bin   (kube-apiserver, kube-controller-manager,
#                                                 kube-scheduler, kubelet)
#   state        $MASS_K8S_STATE                 (certs, etcd data, containerd root, logs)
# kubectl is not built (it would double the build): the script talks to the
# API server with curl and the admin certificate.
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
BIN=${MASS_K8S_BIN:-$CACHE/$K8S_VERSION/bin}
GVISOR_SHIM=${GVISOR_SHIM:-/usr/local/bin/containerd-shim-runsc-v1}
API_PORT=${MASS_K8S_API_PORT:-16443}
ETCD_PORT=${MASS_K8S_ETCD_PORT:-12379}
ETCD_PEER_PORT=$((ETCD_PORT + 1))
CTR_SOCK=$RUN/containerd/containerd.sock
KUBECONFIG_ADMIN=$STATE/admin.kubeconfig
# The node is named localhost: the API server reaches the kubelet by the
# node's Hostname address (the kubelet refuses a loopback --node-ip), and
# localhost resolves to loopback everywhere.
NODE_NAME=${MASS_K8S_NODE:-localhost}
SERVICE_CIDR=10.233.0.0/24
POD_CIDR=10.234.0.0/24
KUBELET_PORT=${MASS_K8S_KUBELET_PORT:-11250}
PAUSE_IMAGE=mass.local/pause:1
ROOT=$(cd "$(dirname "$0")/.." && pwd)

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
	for c in kube-apiserver kube-controller-manager kube-scheduler kubelet; do
		printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "$c" >>"$dir/tools.go"
	done
	printf ')\n\nfunc main() {}\n' >>"$dir/tools.go"
}

cmd_build() {
	local want=(kube-apiserver kube-controller-manager kube-scheduler kubelet)
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
		k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubelet)
	rm -rf "$BIN" && mv "$BIN.tmp" "$BIN"
	log "built in $(($(date +%s) - t0))s"
}


# --- packages ---------------------------------------------------------------

# install_packages installs Debian's etcd-server and CNI plugins without
# starting any service (a policy-rc.d for the one apt call), and checks the
# gVisor shim that scripts/setup-host.sh built.
install_packages() {
	local need=()
	command -v etcd >/dev/null || need+=(etcd-server)
	[ -x /usr/lib/cni/loopback ] || need+=(containernetworking-plugins)
	command -v containerd >/dev/null || need+=(containerd)
	command -v openssl >/dev/null || need+=(openssl)
	if [ ${#need[@]} -gt 0 ]; then
		log "apt-get install ${need[*]}"
		local prc=/usr/sbin/policy-rc.d had=0
		[ -e $prc ] && had=1 && cp $prc $prc.mass-k8s
		printf '#!/bin/sh\nexit 101\n' >$prc && chmod +x $prc
		DEBIAN_FRONTEND=noninteractive apt-get install -y -o DPkg::Lock::Timeout=600 --no-install-recommends "${need[@]}" >&2 || {
			[ $had = 1 ] && mv $prc.mass-k8s $prc || rm -f $prc
			die "apt-get install failed"
		}
		[ $had = 1 ] && mv $prc.mass-k8s $prc || rm -f $prc
	fi
	[ -x "$GVISOR_SHIM" ] || log "warning: no gVisor shim at $GVISOR_SHIM (scripts/setup-host.sh builds it): RuntimeClass gvisor will not run"
}

# --- certificates ------------------------------------------------------------

# cert NAME CN O [SANS]: a key and a certificate signed by the local CA.
cert() {
	local name=$1 cn=$2 o=$3 sans=${4:-} d=$STATE/pki
	[ -f "$d/$name.crt" ] && return 0
	openssl genrsa -out "$d/$name.key" 2048 2>/dev/null
	local subj="/CN=$cn"
	[ -n "$o" ] && subj="/O=$o/CN=$cn"
	openssl req -new -key "$d/$name.key" -subj "$subj" -out "$d/$name.csr" 2>/dev/null
	local ext=$d/$name.ext
	{
		echo "basicConstraints=CA:FALSE"
		echo "keyUsage=critical,digitalSignature,keyEncipherment"
		echo "extendedKeyUsage=serverAuth,clientAuth"
		[ -n "$sans" ] && echo "subjectAltName=$sans"
	} >"$ext"
	openssl x509 -req -in "$d/$name.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
		-days 365 -sha256 -extfile "$ext" -out "$d/$name.crt" 2>/dev/null
	rm -f "$d/$name.csr" "$ext"
}

make_pki() {
	local d=$STATE/pki
	mkdir -p "$d" && chmod 0700 "$d"
	if [ ! -f "$d/ca.crt" ]; then
		openssl req -x509 -newkey rsa:2048 -nodes -keyout "$d/ca.key" -out "$d/ca.crt" \
			-days 365 -subj "/CN=mass-k8s-local-ca" 2>/dev/null
	fi
	cert apiserver kube-apiserver "" "IP:127.0.0.1,IP:10.233.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc"
	cert admin mass-admin system:masters
	cert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters
	cert controller-manager system:kube-controller-manager ""
	cert scheduler system:kube-scheduler ""
	cert kubelet "system:node:$NODE_NAME" system:nodes "IP:127.0.0.1,DNS:$NODE_NAME,DNS:localhost"
	[ -f "$d/sa.key" ] || { openssl genrsa -out "$d/sa.key" 2048 2>/dev/null && openssl rsa -in "$d/sa.key" -pubout -out "$d/sa.pub" 2>/dev/null; }
	for who in admin controller-manager scheduler kubelet; do
		kubeconfig "$who" >"$STATE/$who.kubeconfig"
		chmod 0600 "$STATE/$who.kubeconfig"
	done
}

kubeconfig() {
	local who=$1 d=$STATE/pki
	cat <<KC
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority: $d/ca.crt
users:
- name: $who
  user:
    client-certificate: $d/$who.crt
    client-key: $d/$who.key
contexts:
- name: local
  context: {cluster: local, user: $who}
current-context: local
KC
}

# --- configuration -----------------------------------------------------------

write_containerd_config() {
	mkdir -p "$STATE/containerd" "$RUN/containerd" "$STATE/cni/net.d" "$STATE/cni/bin" "$STATE/gvisor"
	# gVisor runs under containerd's own runc shim with runsc as its OCI
	# binary, as dockerd runs it (scripts/setup-host.sh): the gVisor shim
	# sets its own oom_score_adj to -999, which needs CAP_SYS_RESOURCE, and
	# this machine's root lacks it ("failed to set OOM Score on shim").
	# runsc joins a pod's containers into one sandbox by the CRI annotations.
	local runsc
	runsc=$(dirname "$(readlink -f "$GVISOR_SHIM")")/runsc
	mkdir -p "$STATE/log"
	# runsc-mass makes that path tear pods down (SECURITY.md, "gVisor under
	# the runc shim"):
	# - The runc shim takes the pid in --pid-file as the container's init
	#   and reports the container exited when that process exits. runsc
	#   writes the sandbox's pid for every container of a pod, so the exit
	#   of a pod's app container was never seen: containerd's StopContainer
	#   and StopPodSandbox waited for it until the kubelet's deadline, the
	#   pause container was never killed and the sandbox and its gofers
	#   outlived the pod. For an app container ("container-type" container)
	#   runsc-mass writes instead the pid of a waiter that runs
	#   `runsc wait` on that container and exits with its status.
	# - A kill of a container whose sandbox has ended reads as runc's
	#   "container not running", which the shim takes as done.
	# - "start" of a pod's second container spawns its gofer, which would
	#   inherit the pipe the runc shim reads start's output from: the shim
	#   would wait for an EOF that never comes. start's output goes to a log.
	cat >"$STATE/gvisor/runsc-mass" <<SH
#!/bin/sh
# runsc with the flags scripts/setup-host.sh registers with dockerd
RUNSC=$runsc
LOG=$STATE/log/runsc-mass.log
SH
	cat >>"$STATE/gvisor/runsc-mass" <<'SH'
cmd= bundle= pidfile= root= prev= id=
for a in "$@"; do
	case $prev in --bundle | -b) bundle=$a ;; --pid-file) pidfile=$a ;; --root) root=$a ;; esac
	case $a in --bundle=*) bundle=${a#--bundle=} ;; --pid-file=*) pidfile=${a#--pid-file=} ;; --root=*) root=${a#--root=} ;; esac
	if [ -z "$cmd" ]; then
		case $a in create | start | delete | kill | state | exec | ps | events | pause | resume | update | wait) cmd=$a ;; esac
	fi
	prev=$a id=$a
done
run() { "$RUNSC" --platform=systrap --network=none "$@"; }
case $cmd in
start) exec "$RUNSC" --platform=systrap --network=none "$@" >>"$LOG" 2>&1 ;;
kill)
	# The runc shim takes a kill of a process that already ended as done
	# only on runc's words for it ("container not running"); runsc says
	# "sandbox is not running", and the shim failed the kill, so the CRI
	# never deleted the pause container of a pod whose sandbox had ended.
	out=$(run "$@" 2>&1) && exit 0
	rc=$?
	case $out in
	*"not running"*) printf 'container not running (%s)\n' "$out" >&2 ;;
	*) printf '%s\n' "$out" >&2 ;;
	esac
	exit $rc
	;;
create)
	if [ -n "$pidfile" ] && [ -n "$bundle" ] && grep -q '"io.kubernetes.cri.container-type": *"container"' "$bundle/config.json" 2>/dev/null; then
		run "$@" || exit
		# The waiter: off the shim's pipes, reparented to the shim (a
		# subreaper) when this script exits.
		sh -c '
			r=$1 root=$2 id=$3 st=
			while st=$("$r" --root "$root" state "$id" 2>/dev/null); do
				case $st in
				*"\"status\": \"running\""*) break ;;
				*"\"status\": \"stopped\""*) exit 0 ;;
				esac
				sleep 0.05
			done
			case $st in *running*) ;; *) exit 0 ;; esac
			out=$("$r" --root "$root" wait "$id") || exit 255
			code=${out##*\"exitStatus\":}
			code=${code%%[!0-9]*}
			echo "$(date -u +%FT%T) runsc-wait $id: exit ${code:-255}" >&2
			exit "${code:-255}"
		' runsc-wait "$RUNSC" "$root" "$id" </dev/null >>"$LOG" 2>&1 &
		# go-runc reads the pid file with strconv.Atoi: no newline.
		printf %s $! >"$pidfile.tmp" && mv "$pidfile.tmp" "$pidfile"
		exit 0
	fi
	;;
esac
exec "$RUNSC" --platform=systrap --network=none "$@"
SH
	chmod 0755 "$STATE/gvisor/runsc-mass"
	cat >"$STATE/containerd/config.toml" <<TOML
version = 2
root = "$STATE/containerd/root"
state = "$RUN/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = "$CTR_SOCK"
[ttrpc]
  address = "$CTR_SOCK.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "$STATE/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  enable_selinux = false
  disable_apparmor = true
  # This root lacks CAP_SYS_RESOURCE: no container may get an
  # oom_score_adj below containerd's own (the CRI gives sandboxes -998).
  restrict_oom_score_adj = true
  enable_unprivileged_ports = false
  enable_unprivileged_icmp = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runsc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runsc.options]
        BinaryName = "$STATE/gvisor/runsc-mass"
        Root = "$RUN/runsc"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$STATE/cni/bin"
    conf_dir = "$STATE/cni/net.d"
    max_conf_num = 1
TOML
	# Sandbox nodes: loopback only (containerd brings lo up itself with the
	# loopback plugin; mass-cni-noroute makes no interface).
	ln -sf /usr/lib/cni/loopback "$STATE/cni/bin/loopback"
	install -m 0755 "$CACHE/mass-cni-noroute" "$STATE/cni/bin/mass-cni-noroute"
	cat >"$STATE/cni/net.d/10-mass-noroute.conflist" <<JSON
{"cniVersion": "1.0.0", "name": "mass-noroute", "plugins": [{"type": "mass-cni-noroute"}]}
JSON
}

write_kubelet_config() {
	mkdir -p "$STATE/kubelet/seccomp"
	cat >"$STATE/kubelet-config.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: $KUBELET_PORT
healthzBindAddress: 127.0.0.1
healthzPort: $((KUBELET_PORT - 2))
readOnlyPort: 0
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $STATE/pki/ca.crt}
authorization: {mode: Webhook}
tlsCertFile: $STATE/pki/kubelet.crt
tlsPrivateKeyFile: $STATE/pki/kubelet.key
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://$CTR_SOCK
podPidsLimit: 256
maxPods: 64
resolvConf: ""
serializeImagePulls: false
rotateCertificates: false
serverTLSBootstrap: false
enableDebuggingHandlers: true
imageGCHighThresholdPercent: 100
evictionHard: {"memory.available": "200Mi", "nodefs.available": "2%", "imagefs.available": "2%"}
YAML
}

# --- processes ---------------------------------------------------------------

# start NAME ARGV...: runs ARGV in the background (own session), pid in
# $RUN/NAME.pid, output in $STATE/log/NAME.log; an already running NAME stays.
start() {
	local name=$1
	shift
	if running "$name"; then return 0; fi
	mkdir -p "$STATE/log"
	setsid "$@" >>"$STATE/log/$name.log" 2>&1 </dev/null &
	echo $! >"$RUN/$name.pid"
	log "started $name (pid $!)"
}

running() { [ -f "$RUN/$1.pid" ] && kill -0 "$(cat "$RUN/$1.pid")" 2>/dev/null; }

# wait_for WHAT SECONDS CMD...: retry CMD until it succeeds.
wait_for() {
	local what=$1 secs=$2 t0
	shift 2
	t0=$(date +%s)
	until "$@" >/dev/null 2>&1; do
		[ $(($(date +%s) - t0)) -lt "$secs" ] || die "$what not ready after ${secs}s (logs in $STATE/log)"
		sleep 1
	done
	log "$what ready after $(($(date +%s) - t0))s"
}

# api METHOD PATH [BODY]: the API server as the admin (no kubectl: it
# would double the build). BODY is JSON.
api() {
	local p=$STATE/pki
	curl -sf --cacert "$p/ca.crt" --cert "$p/admin.crt" --key "$p/admin.key" -X "$1" \
		-H 'Content-Type: application/json' ${3:+--data "$3"} "https://127.0.0.1:$API_PORT$2"
}

# ensure PATH BODY: create the object unless it exists.
ensure() { api GET "$1/$(echo "$2" | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["name"])')" >/dev/null || api POST "$1" "$2" >/dev/null; }

start_etcd() {
	start etcd etcd --name mass-k8s --data-dir "$STATE/etcd" \
		--listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
		--listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
		--initial-cluster "mass-k8s=http://127.0.0.1:$ETCD_PEER_PORT" --listen-metrics-urls "" --quota-backend-bytes 2147483648
	wait_for etcd 60 curl -sf "http://127.0.0.1:$ETCD_PORT/health"
}

start_apiserver() {
	local p=$STATE/pki
	start kube-apiserver "$BIN/kube-apiserver" --bind-address 127.0.0.1 --advertise-address 127.0.0.1 \
		--secure-port "$API_PORT" --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
		--service-cluster-ip-range "$SERVICE_CIDR" --allow-privileged=false --anonymous-auth=false \
		--authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
		--client-ca-file "$p/ca.crt" --tls-cert-file "$p/apiserver.crt" --tls-private-key-file "$p/apiserver.key" \
		--kubelet-client-certificate "$p/apiserver-kubelet-client.crt" --kubelet-client-key "$p/apiserver-kubelet-client.key" \
		--kubelet-preferred-address-types Hostname --kubelet-certificate-authority "$p/ca.crt" \
		--service-account-issuer https://kubernetes.default.svc --service-account-key-file "$p/sa.pub" \
		--service-account-signing-key-file "$p/sa.key" --profiling=false --watch-cache=true
	wait_for kube-apiserver 180 api GET /readyz
}

start_controllers() {
	local p=$STATE/pki
	start kube-controller-manager "$BIN/kube-controller-manager" --kubeconfig "$STATE/controller-manager.kubeconfig" \
		--authentication-kubeconfig "$STATE/controller-manager.kubeconfig" --authorization-kubeconfig "$STATE/controller-manager.kubeconfig" \
		--bind-address 127.0.0.1 --secure-port "$((API_PORT + 2))" --leader-elect=false \
		--service-account-private-key-file "$p/sa.key" --root-ca-file "$p/ca.crt" --use-service-account-credentials \
		--controllers '*,-nodeipam,-cloud-node-lifecycle,-service-lb-controller,-route' --profiling=false
	start kube-scheduler "$BIN/kube-scheduler" --kubeconfig "$STATE/scheduler.kubeconfig" \
		--authentication-kubeconfig "$STATE/scheduler.kubeconfig" --authorization-kubeconfig "$STATE/scheduler.kubeconfig" \
		--bind-address 127.0.0.1 --secure-port "$((API_PORT + 3))" --leader-elect=false --profiling=false
}

start_node() {
	start kubelet "$BIN/kubelet" --config "$STATE/kubelet-config.yaml" --kubeconfig "$STATE/kubelet.kubeconfig" \
		--hostname-override "$NODE_NAME" --root-dir "$STATE/kubelet" \
		--node-labels "mass.dev/sandbox-node=true"
	wait_for "node $NODE_NAME" 180 node_ready
}

node_ready() {
	api GET "/api/v1/nodes/$NODE_NAME" | python3 -c 'import json,sys; n=json.load(sys.stdin); sys.exit(0 if any(c["type"]=="Ready" and c["status"]=="True" for c in n["status"]["conditions"]) else 1)'
}

# load_pause makes the pod sandbox image: the helper's pause on an empty
# root (no registry here).
load_pause() {
	ctr --address "$CTR_SOCK" -n k8s.io images ls -q | grep -qx "$PAUSE_IMAGE" && return 0
	local d
	d=$(mktemp -d)
	cp "$CACHE/mass-sandbox-helper" "$d/pause"
	printf 'FROM scratch\nCOPY pause /pause\nUSER 65532:65532\nENTRYPOINT ["/pause", "pause"]\n' >"$d/Dockerfile"
	docker build -q -t "$PAUSE_IMAGE" "$d" >/dev/null
	docker save "$PAUSE_IMAGE" | ctr --address "$CTR_SOCK" -n k8s.io images import --no-unpack=false - >/dev/null
	rm -rf "$d"
	log "imported $PAUSE_IMAGE"
}

# cmd_load IMAGE [AS]: the Docker image IMAGE with the helper built in at
# /.mass/mass-sandbox-helper, imported into the cluster's containerd as AS.
cmd_load() {
	local img=${1:?image} as=${2:-} d
	[ -n "$as" ] || as="$(echo "${img%%:*}" | sed 's#.*/##')-k8s:latest"
	build_tools
	local want
	want="$(docker image inspect -f '{{.Id}}' "$img") $(sha256sum "$CACHE/mass-sandbox-helper" | cut -d' ' -f1)"
	mkdir -p "$STATE/images"
	if [ "$(cat "$STATE/images/$as.id" 2>/dev/null)" = "$want" ] &&
		ctr --address "$CTR_SOCK" -n k8s.io images ls -q | grep -q "/$as\$\|^$as\$"; then
		log "$as is loaded (same image and helper)"
		return 0
	fi
	d=$(mktemp -d)
	cp "$CACHE/mass-sandbox-helper" "$d/mass-sandbox-helper"
	printf 'FROM %s\nCOPY mass-sandbox-helper /.mass/mass-sandbox-helper\n' "$img" >"$d/Dockerfile"
	chmod 0755 "$d/mass-sandbox-helper"
	docker build -q -t "$as" "$d" >/dev/null
	docker save "$as" | ctr --address "$CTR_SOCK" -n k8s.io images import - >/dev/null
	rm -rf "$d"
	echo "$want" >"$STATE/images/$as.id"
	log "imported $img as $as"
}

# build_tools builds the helper and the CNI plugin from this checkout.
build_tools() {
	mkdir -p "$CACHE"
	(cd "$ROOT" && CGO_ENABLED=0 go build -trimpath -o "$CACHE/" ./sandbox/helper/cmd/mass-sandbox-helper ./sandbox/kubernetes/noroute/cmd/mass-cni-noroute \
		./sandbox/kubernetes/cmd/mass-k8s-seccomp)
}

cluster_objects() {
	local rv
	# sed, not head: under pipefail a runsc that head's exit killed with
	# SIGPIPE made rv "<version>\nunknown", which broke the JSON below.
	rv=$("$(dirname "$(readlink -f "$GVISOR_SHIM")")/runsc" --version 2>/dev/null | sed -n 1p) || true
	[ -n "$rv" ] || rv=unknown
	ensure /apis/node.k8s.io/v1/runtimeclasses '{"apiVersion":"node.k8s.io/v1","kind":"RuntimeClass","metadata":{"name":"gvisor","annotations":{"mass.dev/runtime-version":"'"$rv"' (--platform=systrap --network=none)"}},"handler":"runsc"}'
	ensure /api/v1/namespaces '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"mass-sandbox","labels":{"pod-security.kubernetes.io/enforce":"privileged","pod-security.kubernetes.io/warn":"restricted"}}}'
	# The ServiceAccount admission needs the namespace's default account
	# (the controller-manager makes it too, a little later).
	wait_for "namespace mass-sandbox" 30 api GET /api/v1/namespaces/mass-sandbox
	ensure /api/v1/namespaces/mass-sandbox/serviceaccounts '{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"default"},"automountServiceAccountToken":false}'
	# The project's seccomp profile as a kubelet Localhost profile.
	"$CACHE/mass-k8s-seccomp" >"$STATE/kubelet/seccomp/mass.json"
}

# cmd_prep is everything up needs but the Kubernetes binaries: packages,
# tools, certificates, configuration, etcd and the node's containerd.
cmd_prep() {
	install_packages
	build_tools
	mkdir -p "$STATE" "$RUN" && chmod 0700 "$STATE"
	make_pki
	write_containerd_config
	write_kubelet_config
	start_etcd
	start containerd containerd --config "$STATE/containerd/config.toml"
	wait_for containerd 60 ctr --address "$CTR_SOCK" version
	load_pause
}

cmd_up() {
	local t0
	t0=$(date +%s)
	cmd_build
	cmd_prep
	start_apiserver
	start_controllers
	start_node
	cluster_objects
	log "cluster up in $(($(date +%s) - t0))s; kubeconfig $KUBECONFIG_ADMIN"
}

cmd_down() {
	local name pid
	for name in kubelet kube-scheduler kube-controller-manager kube-apiserver etcd containerd; do
		[ -f "$RUN/$name.pid" ] || continue
		pid=$(cat "$RUN/$name.pid")
		if kill -0 "$pid" 2>/dev/null; then
			kill "$pid"
			for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
			if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid"; fi
			log "stopped $name (pid $pid)"
		fi
		rm -f "$RUN/$name.pid"
	done
	# Shims of this containerd outlive it: end those whose socket is ours,
	# and the gVisor sandboxes and gofers of this cluster (their state is
	# under $RUN) of pods still running when the cluster stops. (Deleted
	# pods leave none since runsc-mass's waiter; make k8s-test counts them.)
	for pid in $(pgrep -f "containerd-shim.*-address $CTR_SOCK" || true) $(pgrep -f "runsc-(sandbox|gofer) .*$RUN/" || true); do
		kill -9 "$pid" 2>/dev/null || true
	done
}

cmd_status() {
	local name
	for name in etcd kube-apiserver kube-controller-manager kube-scheduler containerd kubelet; do
		if running "$name"; then echo "$name: running (pid $(cat "$RUN/$name.pid"))"; else echo "$name: stopped"; fi
	done
	if running kube-apiserver; then
		api GET /api/v1/nodes | python3 -c 'import json,sys
for n in json.load(sys.stdin)["items"]:
    i=n["status"]["nodeInfo"]; r=[c["status"] for c in n["status"]["conditions"] if c["type"]=="Ready"]
    print("node", n["metadata"]["name"], "ready="+(r[0] if r else "?"), i["kubeletVersion"], i["containerRuntimeVersion"], i["kernelVersion"])'
		api GET /apis/node.k8s.io/v1/runtimeclasses | python3 -c 'import json,sys
for c in json.load(sys.stdin)["items"]: print("runtimeclass", c["metadata"]["name"], "handler", c["handler"])'
	fi
	return 0
}

case "${1:-}" in
build) cmd_build ;;
packages) install_packages ;;
prep) cmd_prep ;;
control-plane) start_apiserver && start_controllers && cluster_objects ;;
up) cmd_up ;;
down) cmd_down ;;
status) cmd_status ;;
load) shift; cmd_load "$@" ;;
kubeconfig) echo "$KUBECONFIG_ADMIN" ;;
*) echo "usage: $0 build|up|down|status|load IMAGE [AS]|kubeconfig" >&2; exit 2 ;;
esac
