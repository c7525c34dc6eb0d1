#!/usr/bin/env bash
# How long a new user waits, measured from a fresh clone with ccache off (a fresh machine has no cache): the
# set-up (packages already present: only what `make deps-demo` still does), the demo's build, the first figure
# on disk, the whole `make demo`, then `make test` after it. One line per step, with the machine's load.
# Usage: scripts/fresh-timing.sh [WORK_DIR]   (default: a new temporary folder; the clone is made from this
# checkout's HEAD, so uncommitted changes are not measured). FRESH_TEST=0: stop after the demo.
# FRESH_BARE=1: a new user's home as well (HOME=WORK_DIR/home, empty): the venv with the PyPI torch wheel, pip's
# cache and the assets are downloaded and installed inside the clock. The Debian packages stay as they are: those of
# install-deps.sh that are missing are installed inside the clock (as root); the line "Debian packages" says how
# many were present and how many of the project's were missing.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$(mktemp -d)}
clone="$work/gaugelab"
rm -rf "$clone"
git clone -q "$src" "$clone"
cd "$clone"
export CCACHE_DISABLE=1
if [ "${FRESH_BARE:-0}" = 1 ]; then
  rm -rf "$work/home" && mkdir -p "$work/home"
  export HOME="$work/home"
fi
t0=$(date +%s)
line() { printf '%-44s %6d s   (load %s, %s cores)\n' "$1" "$(( $2 ))" "$(cut -d' ' -f1-3 /proc/loadavg)" "$(nproc)"; }
echo "fresh clone of $(git rev-parse --short HEAD) in $clone, ccache off, HOME=$HOME$([ "${FRESH_BARE:-0}" = 1 ] && echo ' (empty: the venv, pip cache and assets inside the clock)')"
echo "Debian packages: $(dpkg-query -W -f='${Status}\n' 2>/dev/null | grep -c 'install ok installed') installed before the clock; those of scripts/install-deps.sh missing: $(GAUGELAB_DEPS_PART=all bash -c '. <(sed -n "/^apt_first=(/,/^)/p;/^apt_later=(/,/^)/p" scripts/install-deps.sh); for p in "${apt_first[@]}" "${apt_later[@]}"; do dpkg-query -W -f="\${Status}" "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"; done' | wc -l) (installed inside the clock, as root)"
# the first figure: watch figures/ while make demo runs
first=""
( make demo > "$work/demo.log" 2>&1; echo $? > "$work/demo.rc" ) &
demo_pid=$!
while kill -0 "$demo_pid" 2>/dev/null; do
  if [ -z "$first" ] && ls figures/*.png >/dev/null 2>&1; then
    first=$(( $(date +%s) - t0 ))
    line "first figure on disk after make demo starts" "$first"
  fi
  sleep 2
done
demo_s=$(( $(date +%s) - t0 ))
rc=$(cat "$work/demo.rc")
[ "$rc" = 0 ] || { tail -20 "$work/demo.log"; echo "make demo failed (exit $rc)"; exit 1; }
build_s=$(grep -m1 "torch-free gaugelab built" "$work/demo.log" | sed 's/.*\] \([0-9]*\) s.*/\1/')
line "torch-free gaugelab built" "${build_s:-0}"
line "make demo whole" "$demo_s"
[ "${FRESH_TEST:-1}" = 0 ] && { echo "logs: $work/demo.log (make test not run: FRESH_TEST=0)"; exit 0; }
t1=$(date +%s)
make test > "$work/test.log" 2>&1 || { tail -20 "$work/test.log"; echo "make test failed"; exit 1; }
line "make test after make demo" "$(( $(date +%s) - t1 ))"
echo "logs: $work/demo.log, $work/test.log"
