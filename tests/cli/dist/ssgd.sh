# kg-train --dist ssgd: synchronous data-parallel training.  One process
# with --dist ssgd equals the plain one bit for bit; 2 and 4 ranks, each computing its
# share of every chunk and summing gradients with MPI, equal one process
# with the same global batch to float rounding after many steps.
source "$KG_TOP/tests/cli/lib.sh"
plan 9

if ! command -v mpirun >/dev/null; then
	skip_all "dist ssgd: mpirun is not installed"
fi
MPI="timeout 60 mpirun --oversubscribe"
CLOSE=$KG_BUILD/aux/npy_close
d=$(fixture_data umls)
kg-ingest -q -o ds --train "$d/train.txt.gz" --valid "$d/valid.txt.gz" \
    --test "$d/test.txt.gz" || { notok "dist ssgd: ingest"; exit 1; }
# 5216 triples, batches of 500: 11 steps per epoch, 33 in all.
a="-q --model_name ComplEx --hidden_dim 24 --epochs 3 --batch_size 500
    --neg_sample_size 50 --neg_chunk_size 100 --num_thread 1 --no_checkpoint
    --regularization_coef 1e-4 --rel_optimizer adam"

kg-train $a ds plain
kg-train $a --dist ssgd ds one
# (No "one rank under mpirun equals the plain process": every collective
# returns early at one rank, so both sides would run the same code.  The
# SSGD hooks do run in a plain process with --dist ssgd.)
if cmp -s plain/entities.npy one/entities.npy &&
    cmp -s plain/relations.npy one/relations.npy; then
	ok "dist ssgd: --dist ssgd in one process is bit-identical to kg-train"
else
	notok "dist ssgd: one rank differs from kg-train"
fi
for n in 2 4; do
	$MPI -np "$n" kg-train $a --dist ssgd ds r$n 2>err.txt ||
	    notok "dist ssgd: $n ranks failed: $(tail -n 3 err.txt)"
	if "$CLOSE" plain/entities.npy r$n/entities.npy 1e-4 >diff.txt &&
	    "$CLOSE" plain/relations.npy r$n/relations.npy 1e-4 >>diff.txt; then
		ok "dist ssgd: $n ranks match one process after 33 steps ($(head -n 1 diff.txt))"
	else
		notok "dist ssgd: $n ranks drift: $(cat diff.txt)"
	fi
	l1=$(tail -n 1 plain/train_log.jsonl | sed 's/.*"loss": \([^,]*\),.*/\1/')
	ln=$(tail -n 1 r$n/train_log.jsonl | sed 's/.*"loss": \([^,]*\),.*/\1/')
	if awk -v a="$l1" -v b="$ln" 'BEGIN { d = a - b; exit !(d < 1e-5 && d > -1e-5) }'; then
		ok "dist ssgd: $n ranks log the global loss ($ln vs $l1)"
	else
		notok "dist ssgd: $n ranks log loss $ln, one process $l1"
	fi
done
# The shares really differ: a rank alone would not get this result.
if ! "$CLOSE" plain/entities.npy r2/entities.npy 0 >/dev/null; then
	ok "dist ssgd: 2 ranks are not a bit-copy of one process (sums reordered)"
else
	skip "dist ssgd: 2 ranks happened to equal one process bit for bit"
fi
expect_fail "dist ssgd: --partitions with --dist ssgd is a usage error" 2 \
    "drop --partitions" kg-train $a --dist ssgd --partitions x ds bad
expect_fail "dist ssgd: several ranks without a mode are refused" 2 \
    "need --partitions DIR" $MPI -np 2 kg-train $a ds bad
[ ! -e bad ] && ok "dist ssgd: no output after refusals" || notok "dist ssgd: output left behind"
