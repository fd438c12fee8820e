# A rerun of kg-train over its checkpoint (issue 32, item 4): without
# --resume or --force it is refused (exit 2) and the checkpoint stays as
# it was; --force starts over; --resume with changed settings says which
# (old -> new) and records them in the model's manifest and its
# checkpoints.  Shallow, GNN and bucket (--partitions, 1 and 2 ranks)
# paths.
source "$KG_TOP/tests/cli/lib.sh"
plan 44
d=$(fixture_data umls)
kg-ingest -q -o ds --train "$d/train.txt.gz" --valid "$d/valid.txt.gz" \
    --test "$d/test.txt.gz" || { notok "ingest"; exit 1; }
sum() { (cd "$1" && find . -type f | LC_ALL=C sort | xargs md5sum) | md5sum; }
jq_ok() { jq -e "$1" "$2" >/dev/null; }

kg-partition -q -p 4 -s 1 -o p4 ds || { notok "partition"; exit 1; }
shallow="kg-train --model_name DistMult --hidden_dim 16 --num_thread 1 --seed 1"
for path in shallow gnn buckets buckets-2-ranks; do
	case $path in
	shallow) t=$shallow ;;
	gnn) t="kg-train --model_name RGCN --layers 1 --gnn_hidden 16 --hidden_dim 16 --seed 1" ;;
	buckets) t="$shallow --partitions p4" ;;
	*)	if ! command -v mpirun >/dev/null; then
			skip_section 11 "$path: mpirun is not installed"
			continue
		fi
		t="timeout 120 mpirun --oversubscribe -np 2 $shallow --partitions p4" ;;
	esac
	o=$path
	# A run killed after its first checkpoint.
	KG_TEST_KILL_AFTER_CKPT=1:KILL $t -q --epochs 4 --lr 0.1 ds $o 2>/dev/null
	check "$path: killed run left its checkpoint" test -d $o.ckpt
	before=$(sum $o.ckpt)
	expect_fail "$path: rerun without --resume refused" 2 \
	    "^kg-train: checkpoint '$o.ckpt' exists from an earlier run: --resume continues it, --force starts over$" \
	    $t -q --epochs 4 --lr 0.1 ds $o
	check "$path: refused rerun left the checkpoint and wrote no model" \
	    sh -c "test '$(sum $o.ckpt)' = '$before' && test ! -e $o"
	# Resume with other settings that keep the shapes.
	$t --epochs 3 --lr 0.05 --neg_sample_size 16 --resume --keep_checkpoint \
	    ds $o 2>err >/dev/null
	check "$path: resume with changed settings runs" test -s $o/manifest.json
	check "$path: resume says lr 0.1 -> 0.05" grep -q \
	    "^kg-train: warning: resuming from '$o.ckpt' with changed settings: .*lr 0.10*1* -> 0.050*1*" err
	check "$path: resume says neg_sample_size changed" grep -q \
	    "with changed settings: .*neg_sample_size [0-9]* -> 16" err
	check "$path: manifest records old and new lr" jq_ok \
	    '.config.lr == 0.05 and .config.resumed_with_changes.lr.old == 0.1 and .config.resumed_with_changes.lr.new == 0.05' \
	    $o/manifest.json
	check "$path: manifest records old and new negatives" jq_ok \
	    '.config.resumed_with_changes.neg_sample_size.new == 16' $o/manifest.json
	check "$path: kept checkpoint records old and new lr" jq_ok \
	    '.config.lr == 0.05 and .config.resumed_with_changes.lr.old == 0.1' \
	    $o.ckpt/manifest.json
	# --force starts over: its log begins at epoch 1.
	check "$path: --force starts over" $t -q --epochs 1 --lr 0.1 --force ds $o
	check "$path: the forced run's log starts at epoch 1" test \
	    "$(head -1 $o/train_log.jsonl | jq .epoch)" = 1
done
