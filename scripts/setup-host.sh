#!/usr/bin/env bash
# setup-host.sh installs what the build, the tests and the demo need on a fresh
# Debian bookworm host: apt packages (debootstrap, busybox-static, python3-torch,
# python3-scipy for cycle/stats golden tests, CUDA 11.8 headers and nvcc from non-free),
# gVisor's runsc built from the Go module proxy and registered with dockerd
# (MASS_NO_GVISOR=1 skips it) and Go modules. Idempotent.
# Usage: scripts/setup-host.sh [--no-cuda]
set -euo pipefail

want_cuda=1
[[ "${1:-}" == "--no-cuda" ]] && want_cuda=0

need_root() {
	if [[ $(id -u) -ne 0 ]]; then
		echo "setup-host: apt packages missing ($*); run as root: sudo $0" >&2
		exit 1
	fi
}

# Enable contrib and non-free for nvidia-cuda-*; keep the file's other settings.
enable_nonfree() {
	local f=/etc/apt/sources.list.d/debian.sources
	if [[ -f $f ]] && ! grep -q 'non-free' "$f"; then
		sed -i 's/^Components: main$/Components: main contrib non-free non-free-firmware/' "$f"
		return 0
	fi
	if [[ -f /etc/apt/sources.list ]] && grep -q '^deb .* main$' /etc/apt/sources.list && ! grep -q non-free /etc/apt/sources.list; then
		sed -i 's/^\(deb .*\) main$/\1 main contrib non-free non-free-firmware/' /etc/apt/sources.list
	fi
}

pkgs=(debootstrap busybox-static python3-torch python3-numpy python3-scipy python3-jinja2 sqlite3 ca-certificates libopenblas-dev libopenblas0-pthread tmux chromium)
if [[ $want_cuda -eq 1 ]]; then
	pkgs+=(nvidia-cuda-dev nvidia-cuda-toolkit)
fi

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [[ ${#missing[@]} -gt 0 ]]; then
	need_root "${missing[*]}"
	echo "setup-host: installing ${missing[*]}"
	[[ $want_cuda -eq 1 ]] && enable_nonfree
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# gVisor: runsc built by the go command from the module proxy at a pinned
# version (Debian's runsc 0.0~20221219 refuses statx with AT_NO_AUTOMOUNT,
# so `ls` and `stat` fail with EINVAL in every box; SECURITY.md, gVisor),
# installed under a directory named by its version and registered with
# dockerd as "runsc" by a config reload (SIGHUP), never a restart, without
# touching the file's other keys. A new pin gets a new directory: containers
# still running on the old binary keep it. The build is skipped when the
# installed binary already reports the pinned version.
# --platform=systrap: gVisor's default, no KVM needed, faster than ptrace;
# --network=none: this kernel refuses runsc's own networking in the root
# network namespace. No --oci-seccomp: current runsc applies the container
# profile with every ERRNO action as EPERM, so clone3 (ENOSYS in the
# engine's profile, to make libc fall back to clone) fails with EPERM and
# no thread can start (python3 -c 'import numpy' fails); the helper's own
# filter (sandbox/helper/seccomp_linux.go) filters every agent process.
gvisor_version=v0.0.0-20260905035102-160fafc42237
gvisor_dir=/usr/local/lib/mass/gvisor/$gvisor_version
runsc_entry='{"path": "'$gvisor_dir'/runsc", "runtimeArgs": ["--platform=systrap", "--network=none"]}'
build_runsc() {
	if [[ -x $gvisor_dir/runsc && "$("$gvisor_dir/runsc" --version 2>/dev/null | head -n 1)" == "runsc version $gvisor_version" ]]; then
		return 0
	fi
	need_root "gVisor runsc in $gvisor_dir"
	echo "setup-host: building gVisor runsc $gvisor_version (go install from the module proxy)"
	local tmp start
	tmp=$(mktemp -d)
	start=$(date +%s)
	CGO_ENABLED=0 GOBIN=$tmp go install -trimpath -ldflags "-X gvisor.dev/gvisor/runsc/version.version=$gvisor_version" \
		"gvisor.dev/gvisor/runsc@$gvisor_version" "gvisor.dev/gvisor/shim@$gvisor_version" || { rm -rf "$tmp"; return 1; }
	mkdir -p "$gvisor_dir" &&
		install -m 0755 "$tmp/shim" "$gvisor_dir/containerd-shim-runsc-v1" &&
		install -m 0755 "$tmp/runsc" "$gvisor_dir/runsc" || { rm -rf "$tmp"; return 1; }
	rm -rf "$tmp"
	ln -sfn "$gvisor_dir/containerd-shim-runsc-v1" /usr/local/bin/containerd-shim-runsc-v1
	echo "setup-host: gVisor runsc built in $(($(date +%s) - start)) s: $("$gvisor_dir/runsc" --version | head -n 1)"
}
register_runsc() {
	local conf=/etc/docker/daemon.json
	[[ -x $gvisor_dir/runsc ]] || return 0
	command -v dockerd >/dev/null || return 0
	if [[ -f $conf ]] && python3 -c 'import json,sys; r=json.load(open(sys.argv[1])).get("runtimes",{}); sys.exit(0 if r.get("runsc")==json.loads(sys.argv[2]) else 1)' "$conf" "$runsc_entry"; then
		return 0
	fi
	need_root "runsc registration in $conf"
	python3 - "$conf" "$runsc_entry" <<'PY'
import json, os, sys
path, entry = sys.argv[1], json.loads(sys.argv[2])
conf = {}
if os.path.exists(path):
    with open(path) as f:
        conf = json.load(f)
conf.setdefault("runtimes", {})["runsc"] = entry
tmp = path + ".mass-tmp"
with open(tmp, "w") as f:
    json.dump(conf, f, indent=2)
    f.write("\n")
os.replace(tmp, path)
PY
	local pid
	pid=$(pidof dockerd || true)
	if [[ -n $pid ]]; then
		echo "setup-host: registered runsc in $conf; reloading dockerd (SIGHUP)"
		kill -HUP "$pid"
		sleep 2
	fi
}
if [[ ${MASS_NO_GVISOR:-0} != 1 ]]; then
	# A failed build leaves the registration as it was (auto then uses
	# runc unless a usable runsc is registered) and does not stop setup.
	if build_runsc; then
		register_runsc
	else
		echo "setup-host: WARNING: building gVisor runsc $gvisor_version failed; runsc is not (re)registered" >&2
	fi
fi

echo "setup-host: go modules"
go mod download
echo "setup-host: ok"
