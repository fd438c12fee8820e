#!/usr/bin/env bash
# Partitions, ranks and threads that work together (issue 32, items 7
# and 8): a shallow model on 2 ranks takes 4 partitions by default and
# trains; settings that cannot work are refused while make reads the
# file, before any stage (no MPI_ABORT banner, nothing written), with one
# line that says what to set; each rank gets its share of the cores.
. "$KG_TOP/tests/cli/lib.sh"
plan 14
mk=$KG_TOP/pipelines/enterprise.mk
ncpu=$(nproc)
dry() { make -n -f "$mk" OUT="$PWD/o" "$@" 2>&1; }
has() { case "$p" in *"$1"*) return 0 ;; esac; return 1; }

# The issue's command, at a tiny size: MODEL=ComplEx with the defaults.
if make -s -j2 -f "$mk" MODEL=ComplEx NODES=300 EPOCHS=2 DIM=8 HOPS=1 \
    OUT="$PWD/cx" all >log 2>&1; then
	ok "MODEL=ComplEx with the default ranks trains"
else
	notok "MODEL=ComplEx with the default ranks trains: $(tail -5 log)"
fi
check "MODEL=ComplEx: 4 partitions for 2 ranks" \
    grep -q "\"nparts\": 4" cx/partitions/manifest.json
check "MODEL=ComplEx: metrics" grep -q '"mrr"' cx/metrics.json
check "MODEL=ComplEx: no MPI abort" sh -c '! grep -q MPI_ABORT log'

# refused NAME MESSAGE VAR=VALUE...: make stops with one line holding
# MESSAGE and writes nothing.
refused() {
	local name=$1 msg=$2 err rc
	shift 2
	err=$(make -f "$mk" NODES=300 OUT="$PWD/bad" "$@" all 2>&1 >/dev/null)
	rc=$?
	if [ "$rc" -eq 0 ]; then
		notok "$name (make succeeded)"
	elif [ "$(printf '%s\n' "$err" | wc -l)" -ne 1 ]; then
		notok "$name (more than one line: $err)"
	elif ! grep -qF -- "$msg" <<<"$err"; then
		notok "$name (stderr '$err' lacks '$msg')"
	elif [ -e bad ]; then
		notok "$name (bad/ was written)"
	else
		ok "$name"
	fi
}
refused "shallow, 2 partitions on 2 ranks" \
    "MODEL=ComplEx on 2 ranks needs at least 4 partitions (2 a rank): set PARTS=4 or RANKS=1" \
    MODEL=ComplEx PARTS=2
refused "shallow, 5 partitions on 3 ranks" \
    "MODEL=DistMult on 3 ranks needs at least 6 partitions (2 a rank): set PARTS=6 or RANKS=2" \
    MODEL=DistMult PARTS=5 RANKS=3
refused "GNN, 2 partitions on 4 ranks" \
    "MODEL=RGCN trains one partition a rank: set PARTS=4 (or RANKS=2)" \
    PARTS=2 RANKS=4
p=$(dry RANKS=4)
check "GNN on 4 ranks: 4 partitions by default" has "kg-partition -f -p 4 "
p=$(dry MODEL=ComplEx RANKS=1)
check "shallow on 1 rank: no mpirun" sh -c \
    "! printf '%s' \"\$1\" | grep -q mpirun" sh "$p"
check "clean is never refused" make -s -f "$mk" OUT="$PWD/bad" \
    MODEL=ComplEx PARTS=2 clean

# Threads: the cores shared out among the ranks, at least one each.
t() { local n=$((ncpu / $1)); echo $((n > 0 ? n : 1)); }
p=$(dry RANKS=1)
check "1 rank: every core ($ncpu)" has "--num_thread $ncpu "
p=$(dry SCALE=paper RANKS=2)
check "paper, 2 ranks: $(t 2) thread(s) a rank" has "--num_thread $(t 2) "
p=$(dry RANKS=4)
check "4 ranks: $(t 4) thread(s) a rank" has "--num_thread $(t 4) "
p=$(dry RANKS=2 THREADS=3)
check "THREADS on the command line wins" has "--num_thread 3 "
