# kg-train --buffer_capacity with --max_step: an epoch cut short enters
# no buffer state after the cut, and its swaps (the manifest's figures
# and the epoch's log line) are those of the states it entered: one per
# state after the first, counted here from an uncut epoch's bucket log,
# where each bucket line gives its state ("round") and its positives.
source "$KG_TOP/tests/cli/lib.sh"
plan 9
if ! command -v jq >/dev/null; then
	skip_all "ooc max_step: jq is not installed"
fi
d=$(fixture_data umls)
kg-ingest -q -o ds --train "$d/train.txt.gz" --valid "$d/valid.txt.gz" \
    --test "$d/test.txt.gz" || { notok "ingest umls"; exit 0; }
kg-partition -q -m random -p 4 -s 1 -o p4 ds || { notok "kg-partition"; exit 0; }
bs=256
t="kg-train -q --model_name DistMult --hidden_dim 8 --batch_size $bs
    --neg_sample_size 8 --num_thread 1 --seed 1 --no_checkpoint
    --partitions p4 --buffer_capacity 2"

# fig DIR KEY: a figure of a model dir.
fig() { jq -r ".figures.$2" "$1/manifest.json"; }
same() {	# NAME WANT GOT
	if [ "$2" = "$3" ]; then ok "$1"; else notok "$1: got '$3', want '$2'"; fi
}

$t --epochs 1 ds full || { notok "train one uncut epoch"; exit 0; }
# P = 4, C = 2: (P - C) + (3 - 1) + (2 - 1) = 5 (lib/store/order.h).
same "an uncut epoch makes the order's swaps" 5 "$(fig full swaps)"
# The steps each state trains: its buckets' positives in batches of bs.
awk -v bs=$bs '/"bucket"/ {
	match($0, /"round": [0-9]+/); r = substr($0, RSTART + 9, RLENGTH - 9)
	match($0, /"triples": [0-9]+/); n = substr($0, RSTART + 11, RLENGTH - 11)
	st[r] += int((n + bs - 1) / bs); if (r + 1 > ns) ns = r + 1
} END { for (r = 0; r < ns; r++) print st[r] }' full/train_log.jsonl >steps
same "the uncut log's states add up to its steps" "$(fig full steps)" \
    "$(awk '{ s += $1 } END { print s }' steps)"

# want M: the swaps of a run cut at step M, the states that start before
# step M less the first.
want() {
	awk -v m="$1" '{ if (s < m) n++; s += $1 } END { print n - 1 }' steps
}
s0=$(sed -n 1p steps)
s01=$(sed -n 1,2p steps | awk '{ s += $1 } END { print s }')
for m in "$s0" $((s0 + 1)) $((s01 + 1)); do
	rm -rf cut
	$t --max_step "$m" ds cut || { notok "train cut at step $m"; continue; }
	same "cut at step $m: $(want "$m") swaps in the figures" \
	    "$(want "$m")" "$(fig cut swaps)"
	same "cut at step $m: the epoch line says the same" "$(want "$m")" \
	    "$(tail -n 1 cut/train_log.jsonl | jq .swaps)"
	cp -r cut "cut$m"
done
# Cut at the end of the first state, whose partitions start in memory:
# nothing is read from disk (an uncut epoch reads what the order brings
# back).
same "a run cut after the first state reads nothing" 0 \
    "$(fig "cut$s0" bytes_read)"
