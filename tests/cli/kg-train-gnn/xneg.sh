# Exchanged negatives (--neg_exchange): the exchange itself checked by
# build/aux/gnn_xneg_check as a plain process and on 2, 3 and 4 ranks
# (rows gathered from the right rank, gradients returned to the
# candidates' owners, sources drawn by pool size); through kg-train on 2
# expanded parts: it trains, changes the run, and a run split at a
# checkpoint resumes to the bits of an uninterrupted one; without shared
# negatives it is refused.
source "$KG_TOP/tests/cli/lib.sh"
plan 21

TRAIN=$KG_BIN/kg-train
GEN=$KG_BUILD/aux/kg_gen_enterprise
chk=$KG_BUILD/aux/gnn_xneg_check
if ! command -v mpirun >/dev/null; then
	skip_all "gnn xneg: mpirun is not installed"
fi
"$chk" || notok "gnn xneg: gnn_xneg_check plain process exited with $?"
for n in 2 3 4; do
	timeout 60 mpirun --oversubscribe -np "$n" "$chk" ||
	    notok "gnn xneg: gnn_xneg_check on $n ranks exited with $?"
done
if [ ! -x "$GEN" ]; then
	skip_section 5 "gnn xneg: kg_gen_enterprise is not built"
	exit 0
fi
enterprise_fixture 300 2 ||
    { notok "gnn xneg: pipeline up to kg-expand"; exit 1; }
MPI="timeout 120 mpirun --oversubscribe -np 2"
t="$TRAIN -q --model_name RGCN --features feat --gnn_hidden 16"
t="$t --hidden_dim 16 --num_thread 1 --seed 3 --fanout 4,3 --blocks"
t="$t --neg_chunk_size 16 --neg_sample_size 4 --lr 0.01 --batch_size 64"
t="$t --batches_per_epoch 6 --neg_pool_seeds"
same() {
	for f in entities.npy relations.npy gnn_weights.npy; do
		cmp -s "$1/$f" "$2/$f" || return 1
	done
}

# (No check that one process or one rank with --neg_exchange equals one
# without: the exchange is off at one rank, so both sides would run the
# same code.  gnn_xneg_check above checks the exchange on 2-4 ranks.)
$MPI $t --expanded x2 --epochs 4 --no_checkpoint ds local 2>err ||
    notok "gnn xneg: 2 ranks without exchange: $(cat err)"
$MPI $t --expanded x2 --epochs 4 --no_checkpoint --neg_exchange ds full \
    2>err || notok "gnn xneg: 2 ranks with exchange: $(cat err)"
if [ -s full/entities.npy ] && [ -s local/entities.npy ] &&
    ! same local full; then
	ok "gnn xneg: 2 ranks: the exchange changes the run"
else
	notok "gnn xneg: 2 ranks: the exchange changed nothing (or no model)"
fi
kg-eval -q --auc ds full >full.json 2>err ||
    notok "gnn xneg: kg-eval of the exchanged run: $(cat err)"
check "gnn xneg: exchanged run ranks with a finite AUC" \
    grep -Eq '"auc": 0\.[0-9]' full.json
$MPI $t --expanded x2 --epochs 2 --keep_checkpoint --neg_exchange ds half \
    2>/dev/null
$MPI $t --expanded x2 --epochs 4 --resume --checkpoint_dir half.ckpt \
    --neg_exchange ds resumed 2>err ||
    notok "gnn xneg: resume on 2 ranks: $(cat err)"
check "gnn xneg: 2 ranks split at a checkpoint = uninterrupted" \
    same full resumed

expect_fail "gnn xneg: needs shared negatives" 2 "neg_chunk_size" \
    $TRAIN -q --model_name RGCN --features feat --neg_exchange ds bad1
check "gnn xneg: refused run left no output" test ! -e bad1
