#!/usr/bin/env bash
# layers.sh prints mass's layer table from `go list -deps`: for each wing,
# its packages, the imports that run from it up into daemon/ (direct and
# through dependencies) and whether it links SQLite; then what each binary
# links. Run from anywhere inside the repository.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
mod=$(go list -m)

# wing: the layer a package belongs to.
wing() {
	local rel=${1#"$mod"}
	rel=${rel#/}
	case $rel in
	cmd/*) echo "cmd" ;;
	daemon | daemon/*) echo "daemon" ;;
	cli | cli/*) echo "cli" ;;
	cycle/*) echo "cycle" ;;
	agents/*) echo "agents" ;;
	trainer | trainer/*) echo "trainer" ;;
	sandbox | sandbox/*) echo "sandbox" ;;
	cuda | cuda/*) echo "cuda" ;;
	*) echo "leaves" ;;
	esac
}

declare -A pkgs direct deep sqlite
while read -r path imports; do
	w=$(wing "$path")
	pkgs[$w]=$((${pkgs[$w]:-0} + 1))
	for i in $imports; do
		[[ $i == "$mod/daemon"* && $w != daemon && $w != cli && $w != cmd ]] && direct[$w]=$((${direct[$w]:-0} + 1))
	done
done < <(go list -f '{{.ImportPath}} {{join .Imports " "}}' ./...)
while read -r path deps; do
	w=$(wing "$path")
	for d in $deps; do
		[[ $d == "$mod/daemon"* && $w != daemon && $w != cli && $w != cmd ]] && deep[$w]=$((${deep[$w]:-0} + 1))
		[[ $d == modernc.org/sqlite* ]] && sqlite[$w]=yes
	done
done < <(go list -f '{{.ImportPath}} {{join .Deps " "}}' ./...)

printf '%-8s %8s %14s %18s %8s\n' layer packages "imports->daemon" "via deps->daemon" sqlite
for w in leaves cuda sandbox trainer agents cycle cli daemon cmd; do
	up=${direct[$w]:-0} via=${deep[$w]:-0}
	[[ $w == cli || $w == daemon || $w == cmd ]] && up=- via=- # the top floor may
	printf '%-8s %8d %14s %18s %8s\n' "$w" "${pkgs[$w]:-0}" "$up" "$via" "${sqlite[$w]:-no}"
done
echo
printf '%-12s %18s %8s\n' binary "project packages" sqlite
for b in massd massctl mass-train; do
	deps=$(go list -deps "./cmd/$b")
	n=$(grep -c "^$mod/" <<<"$deps" || true)
	s=no
	grep -q '^modernc.org/sqlite$' <<<"$deps" && s=yes
	printf '%-12s %18d %8s\n' "$b" "$n" "$s"
done
