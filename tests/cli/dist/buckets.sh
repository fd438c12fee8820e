# kg-train --partitions: distributed bucket training (PyTorch-BigGraph
# style) under mpirun: every bucket is trained
# once per epoch, 2 and 4 ranks reach the 1-rank MRR on UMLS, a resumed
# run equals an uninterrupted one, and failures end quickly with a clear
# message instead of a hang.
source "$KG_TOP/tests/cli/lib.sh"
plan 13

if ! command -v mpirun >/dev/null || ! command -v python3 >/dev/null; then
	skip_all "dist buckets: mpirun or python3 is not installed"
fi
MPI="timeout 60 mpirun --oversubscribe"
d=$(fixture_data umls)
kg-ingest -q -o ds --train "$d/train.txt.gz" --valid "$d/valid.txt.gz" \
    --test "$d/test.txt.gz" || { notok "dist: ingest umls"; exit 1; }
kg-partition -q -m random -p 4 -o p4 ds && kg-partition -q -m random -p 8 \
    -o p8 ds || { notok "dist: partition umls"; exit 1; }
n=$(fixture_data nations)
kg-ingest -q -o ds2 --train "$n/train.txt.gz" --valid "$n/valid.txt.gz" \
    --test "$n/test.txt.gz" || { notok "dist: ingest nations"; exit 1; }

base="-q --model_name ComplEx --hidden_dim 32 --seed 1 --batch_size 256
    --neg_sample_size 64 --lr 0.1 --num_thread 1 --no_checkpoint"
args="$base --epochs 20"

# The filtered MRR (both sides, realistic ties) of a model dir.
mrr() {
	kg-eval -q ds "$1" | python3 -c 'import json, sys
print(json.load(sys.stdin)["metrics"]["both"]["mrr"])'
}

kg-train $args --partitions p4 ds plain 2>err.plain
# (No "one rank under mpirun equals the plain process": every collective
# returns early at one rank, so both sides would run the same code.)

$MPI -np 2 kg-train $args --partitions p4 ds two 2>err.two || notok "dist: 2 ranks failed: $(cat err.two)"
$MPI -np 4 kg-train $args --partitions p8 ds four 2>err.four || notok "dist: 4 ranks failed: $(cat err.four)"
kg-train $args --partitions p8 ds plain8 2>/dev/null

# Every one of the P^2 buckets exactly once per epoch, by some rank.
coverage() {	# LOG P EPOCHS RANKS
	awk -v P="$2" -v E="$3" -v R="$4" '
	/"bucket"/ {
		match($0, /"epoch": [0-9]+/); e = substr($0, RSTART + 9, RLENGTH - 9)
		match($0, /"rank": [0-9]+/); r = substr($0, RSTART + 8, RLENGTH - 8)
		match($0, /"bucket": \[[0-9]+, [0-9]+\]/)
		b = substr($0, RSTART + 11, RLENGTH - 12)
		n[e "/" b]++; rk[r] = 1; lines++
	}
	END {
		bad = 0
		for (e = 1; e <= E; e++)
			for (a = 0; a < P; a++)
				for (c = 0; c < P; c++)
					if (n[e "/" a ", " c] != 1) bad++
		nr = 0; for (r in rk) nr++
		exit !(bad == 0 && lines == E * P * P && nr == R)
	}' "$1"
}
check "dist: 2 ranks train each of 16 buckets once per epoch" coverage two/train_log.jsonl 4 20 2
check "dist: 4 ranks train each of 64 buckets once per epoch" coverage four/train_log.jsonl 8 20 4
check "dist: 1 rank trains each bucket once per epoch" coverage plain/train_log.jsonl 4 20 1

m1=$(mrr plain) m2=$(mrr two) m1b=$(mrr plain8) m4=$(mrr four)
echo "# MRR: P=4 1 rank $m1, 2 ranks $m2; P=8 1 rank $m1b, 4 ranks $m4"
close() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && b != "" && b >= a - 0.02 && a > 0.5) }'; }
check "dist: 2 ranks reach the 1-rank MRR within 0.02 ($m2 vs $m1)" close "$m1" "$m2"
check "dist: 4 ranks reach the 1-rank MRR within 0.02 ($m4 vs $m1b)" close "$m1b" "$m4"
if grep -q '"bytes_sent": [1-9]' two/manifest.json &&
    grep -q '"partition_bytes_held_max_per_rank"' two/manifest.json; then
	ok "dist: bytes sent are counted"
else
	notok "dist: no traffic or memory figures in the manifest"
fi

# Resume: 2 epochs, then resume to 4, equals 4 epochs straight.
ck="-q --model_name ComplEx --hidden_dim 32 --seed 1 --batch_size 256
    --neg_sample_size 64 --lr 0.1 --num_thread 1 --partitions p4"
$MPI -np 2 kg-train $ck --epochs 4 --no_checkpoint ds straight 2>/dev/null
$MPI -np 2 kg-train $ck --epochs 2 --checkpoint_dir ck ds half 2>/dev/null
$MPI -np 2 kg-train $ck --epochs 4 --checkpoint_dir ck --resume ds resumed 2>/dev/null
if [ -f ck/entities-p0.npy ] && cmp -s straight/entities.npy resumed/entities.npy &&
    cmp -s straight/relations.npy resumed/relations.npy; then
	ok "dist: resume from a checkpoint equals an uninterrupted run"
else
	notok "dist: resumed run differs from an uninterrupted one"
fi
expect_fail "dist: a dataset the partitions were not made for is refused" 1 \
    "re-run kg-partition" kg-train $args --partitions p4 ds2 x
expect_fail "dist: resume with another rank count is refused" 1 \
    "same number of ranks" $MPI -np 1 kg-train $ck --epochs 4 \
    --checkpoint_dir ck --resume ds x
head -c 100 ck/entities-p1.npy >ck/short && mv ck/short ck/entities-p1.npy
expect_fail "dist: a damaged checkpoint is refused" 1 "entities-p1.npy" \
    $MPI -np 2 kg-train $ck --epochs 4 --checkpoint_dir ck --resume ds x

# Too few partitions for the ranks: a clear error from every rank.
expect_fail "dist: 4 partitions on 4 ranks is refused" 1 \
    "4 partitions cannot keep 4 ranks busy" $MPI -np 4 kg-train $args \
    --partitions p4 ds x
[ ! -e x ] && ok "dist: no output after a refused run" || notok "dist: output left after a refused run"

# A rank that dies mid-epoch ends the job, quickly and visibly.
start=$(date +%s)
KG_TEST_DIE_RANK=1 $MPI -np 2 kg-train $args --partitions p4 ds dead \
    >out.dead 2>err.dead
rc=$? secs=$(( $(date +%s) - start ))
if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$secs" -lt 30 ] &&
    grep -q "rank 1: dying on purpose" err.dead && [ ! -e dead ]; then
	ok "dist: a dead rank stops the job in ${secs}s with status $rc"
else
	notok "dist: dead rank: status $rc after ${secs}s: $(tail -n 5 err.dead)"
fi
