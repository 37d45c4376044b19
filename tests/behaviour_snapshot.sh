#!/usr/bin/env bash
# tests/behaviour_snapshot.sh REPO OUT: a refactor's check that behaviour did not move. Runs a
# fixed set of 30 commands from REPO's .venv (runs and crashes on every platform, restarts with
# --verify, carry-on, dumps, CSQ1LOGP/CSQJU004/QJST listings, dmpmqlog, scan, torture,
# config/devices/hosts/workloads) into OUT, keeping each command's stdout, stderr and exit code
# and a hash of every file each run directory holds. Take one before the change and one after;
# `diff -r BEFORE AFTER` must print nothing but the line of scanb.err that names OUT itself.
# About 25 seconds. Issue 41's refactors were checked with it after every step.
set -u
[ $# -eq 2 ] || { echo "usage: $0 REPO OUT (OUT must not exist)" >&2; exit 2; }
[ -e "$2" ] && { echo "$0: $2 exists: give a new directory" >&2; exit 2; }
REPO=$(cd "$1" && pwd); OUT=$2; mkdir -p "$OUT"; cd "$OUT"
M="$REPO/.venv/bin/mqlog"
run() { local name=$1; shift; "$M" "$@" >"$name.out" 2>"$name.err"; echo "rc=$?" >>"$name.out"; }
run d1 run --platform distributed --workload putget-pairs --set workload.pairs=3 --set workload.messages_per_pair=300 --out r/d1 --crash-at end
run d1r restart r/d1 --verify
run d1s qmstatus r/d1
run d1dump dump r/d1
run d1dmp dmpmqlog r/d1
run d2 run --platform distributed --workload requester-responder --set workload.requesters=20 --set workload.responders=20 --set workload.duration=0.05 --set log.LogWriteIntegrity=SingleWrite --set log.LogType=LINEAR --out r/d2 --json
run d2c run --in r/d2 --crash-at end --seed 3
run d2r restart r/d2 --verify --restart-mode legacy --json
run z1 run --platform zos --workload putget-pairs --set workload.pairs=3 --set workload.messages_per_pair=300 --out r/z1 --crash-at end
run z1r restart r/z1 --verify
run z1b bsds r/z1
run z1p print r/z1
run z1st stats r/z1
run z2 run --platform zos --workload requester-responder --set workload.requesters=20 --set workload.responders=20 --set workload.duration=0.05 --set log.COMPLOG=RLE --out r/z2 --json
run z2c run --in r/z2 --end immediate
run z2r restart r/z2 --verify --json
run z3 run --platform zos --workload log-fill --out r/z3 --set log.TWOACTV=NO --crash-at end
run z3r restart r/z3 --verify
run ref run --platform reference --workload putget-pairs --out r/ref --crash-at end
run refr restart r/ref --verify
run cfgd config --platform distributed
run cfgz config --platform zos
run devs devices
run hosts hosts
run wl workloads
run tort torture --platform distributed --workload putget-pairs --set workload.pairs=2 --set workload.messages_per_pair=50 --budget 4 --json
run tortz torture --platform zos --workload putget-pairs --set workload.pairs=2 --set workload.messages_per_pair=50 --budget 4 --json
run scand scan r/d1/qm/S0000000.LOG --records
run scanz scan r/z1/qm/LOGCOPY1.DS01 --json
run scanb scan r/z1/qm/BSDS01
for d in r/*; do [ -d "$d" ] && (cd "$d" && find . -type f ! -name '*.log.txt' | sort | xargs sha256sum) > "$(basename $d).hashes"; done
