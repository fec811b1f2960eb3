#!/usr/bin/env bash
# setup-host.sh installs what the build, the tests and the demo need on a fresh
# Debian bookworm host: apt packages (debootstrap, busybox-static, python3-torch,
# python3-scipy for cycle/stats golden tests, CUDA 11.8 headers and nvcc from non-free),
# gVisor's runsc registered with dockerd (MASS_NO_GVISOR=1 skips it) and Go modules. Idempotent.
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

# gVisor: Debian's runsc, registered with the engine by a config reload
# (SIGHUP), never a restart, and without touching the file's other keys.
# --network=none: this kernel refuses runsc's own networking in the root
# network namespace; --oci-seccomp: without it runsc ignores the
# container's seccomp profile (ptrace, unshare, syslog... inside gVisor).
runsc_entry='{"path": "/usr/bin/runsc", "runtimeArgs": ["--platform=ptrace", "--network=none", "--oci-seccomp"]}'
register_runsc() {
	local conf=/etc/docker/daemon.json
	[[ -x /usr/bin/runsc ]] || return 0
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
	if ! dpkg-query -W -f='${Status}' runsc 2>/dev/null | grep -q 'install ok installed'; then
		need_root runsc
		echo "setup-host: installing runsc (gVisor)"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends runsc
	fi
	register_runsc
fi

echo "setup-host: go modules"
go mod download
echo "setup-host: ok"
