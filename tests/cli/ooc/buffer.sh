# kg-train --buffer_capacity / --mem_budget: out-of-core training over a
# partition buffer (issue 14).  Every bucket once per epoch for any P and
# C, swaps at their formula, the assembled entities.npy equal to the
# partitions in the original order, swaps to disk that change no bit
# (the same order over a memory store), a kill -9 mid-epoch resumed to
# the same bits, a full disk refused with nothing half-written, and the
# bad combinations refused.
source "$KG_TOP/tests/cli/lib.sh"
plan 22

py=$(numpy_python)
if [ -z "$py" ]; then
	skip_all "ooc: python3 with numpy is not installed"
fi
d=$(fixture_data umls)
kg-ingest -q -o ds --train "$d/train.txt.gz" --valid "$d/valid.txt.gz" \
    --test "$d/test.txt.gz" || { notok "ooc: ingest umls"; exit 1; }
for p in 1 3 4 5; do
	kg-partition -q -m random -p $p -o p$p ds ||
	    { notok "ooc: partition umls into $p"; exit 1; }
done
args="-q --model_name ComplEx --hidden_dim 8 --seed 3 --batch_size 256
    --neg_sample_size 16 --num_thread 1 --no_checkpoint"

# Every one of the P^2 buckets exactly once per pass of every epoch.
coverage() {	# LOG P EPOCHS PASSES
	awk -v P="$2" -v E="$3" -v K="$4" '
	/"bucket"/ {
		match($0, /"epoch": [0-9]+/); e = substr($0, RSTART + 9, RLENGTH - 9)
		match($0, /"bucket": \[[0-9]+, [0-9]+\]/)
		n[e "/" substr($0, RSTART + 11, RLENGTH - 12)]++
	}
	END {
		for (e = 1; e <= E; e++)
			for (a = 0; a < P; a++)
				for (b = 0; b < P; b++)
					if (n[e "/" a ", " b] != K) exit 1
	}' "$1"
}
# The swaps each epoch's line reports, and the bound, as "S B".
swaps() {
	grep '"swaps"' "$1" | head -1 | sed 's/.*"swaps": \([0-9]*\), "swaps_lower_bound": \([0-9]*\).*/\1 \2/'
}
ok_cov=1 ok_swaps=1
for pc in "1 2" "3 2" "4 2" "4 3" "4 4" "5 2" "5 3" "5 9"; do
	set -- $pc
	kg-train $args --epochs 2 --partitions p$1 --buffer_capacity $2 \
	    ds c-$1-$2 2>err || { notok "ooc: P=$1 C=$2: $(cat err)"; continue; }
	coverage c-$1-$2/train_log.jsonl $1 2 1 || ok_cov=0
	# C = 2 meets the lower bound P(P-1)/2 - 1; C >= P swaps nothing.
	want="$(( $2 >= $1 ? 0 : $2 == 2 ? $1 * ($1 - 1) / 2 - 1 : -1 ))"
	got=$(swaps c-$1-$2/train_log.jsonl)
	[ "$want" = -1 ] || [ "$got" = "$want $want" ] || ok_swaps=0
done
kg-train $args --epochs 2 --partitions p5 --buffer_capacity 3 \
    --bucket_passes 3 ds c-pass 2>/dev/null && coverage c-pass/train_log.jsonl 5 2 3 ||
    ok_cov=0
[ $ok_cov = 1 ] && ok "ooc: every bucket once per epoch (pass) for P 1-5, C 2-9" ||
    notok "ooc: a bucket missed or trained twice"
[ $ok_swaps = 1 ] && ok "ooc: swaps equal the lower bound for C = 2, none when all fit" ||
    notok "ooc: swap counts off"
# P=5, C=3: (5-3) + (5-2-1) + (5-4-1) = 4 swaps against a bound of 4.
check "ooc: P=5 C=3 swaps 4 of at least 4" test "$(swaps c-5-3/train_log.jsonl)" = "4 4"

# The model dir's entities.npy and entity_state.npy hold each
# partition's rows (from the checkpoint) at their original IDs.
kg-train ${args/--no_checkpoint/} --keep_checkpoint --epochs 2 --partitions p4 \
    --buffer_capacity 2 ds m 2>/dev/null
check "ooc: entities.npy is the partitions in the original order" "$py" -c '
import numpy as np, json, sys
off = np.load("p4/part_offsets.npy"); n2o = np.load("p4/new2old.npy")
e = np.load("m/entities.npy"); s = np.load("m/entity_state.npy")
for p in range(4):
    ids = n2o[off[p]:off[p + 1]]
    assert (np.load("m.ckpt/entities-p%d.npy" % p) == e[ids]).all()
    assert (np.load("m.ckpt/entity_state-p%d.npy" % p) == s[ids]).all()
'

# Swaps to disk and back change no bit: the same order over a memory
# store, and a budget that gives the same C.
KG_TEST_BUFFER_IN_MEMORY=1 kg-train $args --epochs 3 --partitions p5 \
    --buffer_capacity 2 ds mem 2>/dev/null
kg-train $args --epochs 3 --partitions p5 --buffer_capacity 2 ds disk 2>/dev/null
kg-train $args --epochs 3 --partitions p5 --mem_budget 3K ds budget 2>/dev/null
check "ooc: swaps through disk give the model of memory, bit for bit" \
    cmp -s mem/entities.npy disk/entities.npy
check "ooc: and the same optimiser state and relations" eval \
    'cmp -s mem/entity_state.npy disk/entity_state.npy &&
    cmp -s mem/relations.npy disk/relations.npy'
check "ooc: --mem_budget 3K holds C = 2 here" eval \
    'cmp -s budget/entities.npy disk/entities.npy &&
    grep -q "\"buffer_capacity\": 2" budget/train_log.jsonl'
check "ooc: the disk run read and wrote partitions" eval \
    '[ "$(grep -o "\"bytes_read\": [0-9]*" disk/manifest.json | tr -dc 0-9)" -gt 0 ]'
check "ooc: --stream gives kg-eval the same metrics" eval \
    'kg-eval -q ds disk >a.json && kg-eval -q --stream ds disk >b.json &&
    "$py" -c "import json; s = lambda f: {k: v for k, v in json.load(open(f)).items() if \"second\" not in k}; assert s(\"a.json\") == s(\"b.json\")"'

# Killed (SIGKILL) in the middle of epoch 2, then resumed: the bits of a
# run that never stopped, and no partition file left by name.
ck=${args/--no_checkpoint/}
mkdir swap
KG_TEST_KILL_STATE=2:4 kg-train $ck --epochs 3 --partitions p5 \
    --buffer_capacity 2 --swap_dir swap ds killed 2>/dev/null
rc=$?
check "ooc: the kill hook killed the run" test $rc -eq 137
check "ooc: a killed run leaves no partition file" test -z "$(ls -A swap)"
kg-train $ck --epochs 3 --partitions p5 --buffer_capacity 2 --swap_dir swap \
    --resume ds killed 2>/dev/null
kg-train $ck --epochs 3 --partitions p5 --buffer_capacity 2 ds whole 2>/dev/null
check "ooc: resumed after kill -9 equals the uninterrupted run" eval \
    'cmp -s killed/entities.npy whole/entities.npy &&
    cmp -s killed/relations.npy whole/relations.npy'
# Killed in epoch 3: the resumed run rebuilds the orders of epochs 1 and
# 2 in turn to start where epoch 2 ended (it once skipped epoch 2's).
KG_TEST_KILL_STATE=3:2 kg-train $ck --epochs 3 --partitions p5 \
    --buffer_capacity 2 ds killed3 2>/dev/null
kg-train $ck --epochs 3 --partitions p5 --buffer_capacity 2 --resume ds \
    killed3 2>/dev/null
check "ooc: resumed in epoch 3 equals the uninterrupted run" cmp -s \
    killed3/entities.npy whole/entities.npy

# A full disk (here the file size limit): a clear error, exit 1, no model
# dir, the last checkpoint intact and nothing half-written left behind.
# (Rows of 64 floats make a partition file larger than the limit.)
big="${ck/--hidden_dim 8/--hidden_dim 64}"
kg-train $big --epochs 1 --partitions p4 --buffer_capacity 2 --swap_dir swap \
    --keep_checkpoint ds full 2>/dev/null
rm -rf full
sum=$(cat full.ckpt/*.npy | cksum)
err=$( (trap '' XFSZ; ulimit -f 4; exec kg-train $big --epochs 3 \
    --partitions p4 --buffer_capacity 2 --swap_dir swap --resume ds full) 2>&1)
rc=$?
check "ooc: a full disk fails with exit 1" test $rc -eq 1
check "ooc: and says which partition and where" eval \
    'grep -Eq "cannot write partition [0-9]+ to .swap.: File too large" <<<"$err"'
check "ooc: no model dir, no temporary, the checkpoint as it was" eval \
    '[ ! -e full ] && [ -z "$(ls -A swap)" ] &&
    [ -z "$(ls -a | grep "\.tmp\.")" ] && [ "$(cat full.ckpt/*.npy | cksum)" = "$sum" ]'

# Refused combinations.
expect_fail "ooc: --buffer_capacity 1" 2 "buffer_capacity" \
    kg-train $args --partitions p4 --buffer_capacity 1 ds x
expect_fail "ooc: --buffer_capacity without --partitions" 2 "need --partitions" \
    kg-train $args --buffer_capacity 2 ds x
expect_fail "ooc: a budget below three partitions" 1 "holds 1 partitions" \
    kg-train $args --partitions p4 --mem_budget 2K ds x
expect_fail "ooc: a bad size" 2 "mem_budget" \
    kg-train $args --partitions p4 --mem_budget 4X ds x
expect_fail "ooc: a swap dir that does not exist" 1 "cannot make partition files in 'nowhere'" \
    kg-train $args --partitions p4 --buffer_capacity 2 --swap_dir nowhere ds x
if command -v mpirun >/dev/null; then
	expect_fail "ooc: out of core under mpirun -np 2" 1 "one process" \
	    timeout 60 mpirun --oversubscribe -np 2 kg-train $args \
	    --partitions p4 --buffer_capacity 2 ds x
fi
