# GNN validation and the training log: train_log.jsonl has a line per
# epoch (epoch, step, loss, seconds; valid_mrr on the validated ones);
# the model written is the best validated epoch's, which kg-eval ranks
# to the same valid MRR; --patience stops where the rule replayed on the
# log says; a run killed after a checkpoint resumes to the bits and the
# log of an uninterrupted one; --target_mrr stops at the first
# validation that reaches it and --time_budget after the epoch that
# spends it (from the command line or a --config file), --target_mrr
# without --valid_every is a usage error; validation refuses several
# ranks.
source "$KG_TOP/tests/cli/lib.sh"
plan 32

GEN=$KG_BUILD/aux/kg_gen_enterprise
if [ ! -x "$GEN" ] || ! command -v python3 >/dev/null; then
	skip_all "gnn valid: kg_gen_enterprise or python3 is missing"
fi
enterprise_fixture 300 ||
    { notok "gnn valid: pipeline up to kg-encode-attrs"; exit 1; }

t="kg-train -q --model_name RGCN --features feat --gnn_hidden 16"
t="$t --hidden_dim 16 --num_thread 1 --seed 3 --fanout 4,3"
t="$t --batch_size 128 --dropout 0.2"

# log.py DIR EVERY PATIENCE EPOCHS: the log's lines and fields, the
# best epoch and the stop replayed from its valid MRRs against the
# manifest's figures, and the best MRR printed.
cat >log.py <<'PY'
import json, sys
d, every, patience, epochs = sys.argv[1], *map(int, sys.argv[2:])
log = [json.loads(l) for l in open(d + "/train_log.jsonl")]
fig = json.load(open(d + "/manifest.json"))["figures"]
assert [x["epoch"] for x in log] == list(range(1, len(log) + 1)), log
for x in log:
    assert {"epoch", "step", "loss", "seconds"} <= set(x), x
    due = every > 0 and (x["epoch"] % every == 0 or x["epoch"] == epochs)
    assert ("valid_mrr" in x) == due, x
best, best_e, bad, stop = -1.0, 0, 0, epochs
for x in log:
    if "valid_mrr" not in x:
        continue
    if x["valid_mrr"] > best:
        best, best_e, bad = x["valid_mrr"], x["epoch"], 0
    else:
        bad += 1
        if patience > 0 and bad >= patience:
            stop = x["epoch"]
            break
assert len(log) == stop, (len(log), stop)
assert fig["epochs"] == len(log), (fig["epochs"], len(log))
# The steps' time: above 0, within the logged epochs' (each logged
# later, to the millisecond).
secs = sum(x["seconds"] for x in log)
assert 0 < fig["train_seconds"] <= secs + 0.001 * len(log), (fig, secs)
want = "early_stopping" if stop < epochs else "epochs"
assert fig["stopped_by"] == want, (fig["stopped_by"], want)
if every > 0:
    assert fig["best_epoch"] == best_e, (fig["best_epoch"], best_e)
    assert abs(fig["best_valid_mrr"] - best) < 1e-6, (fig, best)
    print(best)
PY
# The model's filtered valid MRR by kg-eval.
eval_mrr() {
	kg-eval -q --split valid ds "$1" | python3 -c 'import json, sys
print(json.load(sys.stdin)["metrics"]["both"]["mrr"])'
}
close() {
	python3 -c "import sys; sys.exit(abs($1 - $2) > 1e-6)"
}

check "gnn valid: no validation" $t --epochs 3 --no_checkpoint ds plain
check "gnn valid: a log line per epoch, no valid MRR" \
    python3 log.py plain 0 0 3

check "gnn valid: every epoch" $t --epochs 4 --valid_every 1 \
    --no_checkpoint --lr 0.02 ds v1
if best=$(python3 log.py v1 1 0 4); then
	ok "gnn valid: the log's valid MRRs give the best epoch"
	check "gnn valid: kg-eval ranks the kept model to the best valid MRR" \
	    close "$(eval_mrr v1)" "$best"
else
	notok "gnn valid: the log's valid MRRs give the best epoch"
fi

# A high rate and patience 1: the run stops before its 40 epochs.
p="--epochs 40 --valid_every 2 --patience 1 --lr 0.2"
check "gnn valid: patience" $t $p --no_checkpoint ds early
if best=$(python3 log.py early 2 1 40); then
	ok "gnn valid: patience stops where the log's MRRs say"
	check "gnn valid: stopped before the last epoch" \
	    grep -q '"stopped_by": "early_stopping"' early/manifest.json
	check "gnn valid: the stopped run keeps its best epoch" \
	    close "$(eval_mrr early)" "$best"
else
	notok "gnn valid: patience stops where the log's MRRs say"
fi

# Killed after its 3rd checkpoint (the test hook), then resumed.
KG_TEST_KILL_AFTER_CKPT=3:KILL $t $p ds killed 2>/dev/null
check "gnn valid: SIGKILL after checkpoint 3 stopped the run" test $? -ne 0
check "gnn valid: the checkpoint holds the log" \
    test -s killed.ckpt/train_log.jsonl
check "gnn valid: the killed run resumes" $t $p --resume ds killed
same=1
for f in entities.npy relations.npy gnn_weights.npy; do
	cmp -s early/$f killed/$f || same=0
done
untimed() { sed -E 's/"(seconds|triples_per_second)": [0-9.]*//g' "$1/train_log.jsonl"; }
if [ $same = 1 ] && [ "$(untimed early)" = "$(untimed killed)" ]; then
	ok "gnn valid: killed + resumed = uninterrupted, log too"
else
	notok "gnn valid: killed + resumed differs"
fi

# fig DIR SECTION KEY...: the values of the manifest's figures or
# config keys, separated by spaces.
fig() {
	python3 - "$@" <<'PY'
import json, sys
d, sec, keys = sys.argv[1], sys.argv[2], sys.argv[3:]
m = json.load(open(d + "/manifest.json"))[sec]
print(" ".join(str(m.get(k)) for k in keys))
PY
}
same() {	# NAME WANT GOT
	if [ "$2" = "$3" ]; then ok "$1"; else notok "$1: got '$3', want '$2'"; fi
}

# Time to accuracy.  A low target (the MRR passes 0.05 within a few
# epochs of these 20) stops the run at the first validation that
# reaches it, whose parameters are kept.
check "gnn valid: train to a target MRR" $t --epochs 20 --valid_every 1 \
    --target_mrr 0.05 --no_checkpoint ds tgt
same "gnn valid: --target_mrr stopped the run" "target_mrr" \
    "$(fig tgt figures stopped_by)"
check "gnn valid: at the first validation that reached it" python3 -c '
import json
log = [json.loads(l) for l in open("tgt/train_log.jsonl")]
fig = json.load(open("tgt/manifest.json"))["figures"]
assert fig["epochs"] == len(log) < 20, (fig["epochs"], len(log))
assert log[-1]["valid_mrr"] >= 0.05, log
assert all(x["valid_mrr"] < 0.05 for x in log[:-1]), log
assert fig["best_epoch"] == len(log), fig["best_epoch"]
'
same "gnn valid: the manifest records the target and no budget" \
    "0.05 0.0" "$(fig tgt config target_mrr time_budget)"

# A budget of a microsecond is spent by the first epoch.
check "gnn valid: train with a time budget" $t --epochs 5 \
    --time_budget 1e-6 --no_checkpoint ds tb
same "gnn valid: --time_budget stops after the epoch that spends it" \
    "time_budget 1" "$(fig tb figures stopped_by epochs)"
check "gnn valid: its log has that one epoch" \
    test "$(wc -l <tb/train_log.jsonl)" -eq 1
check "gnn valid: its training time is counted" python3 -c '
import json
f = json.load(open("tb/manifest.json"))["figures"]
assert f["train_seconds"] >= 1e-6, f'

# The same keys in a --config file; the budget, checked after the
# epoch, wins over a target no validation has reached.
cat >tta.json <<'JSON'
{"model_name": "RGCN", "time_budget": 1e-6, "target_mrr": 0.9,
 "valid_every": 2, "epochs": 5}
JSON
check "gnn valid: --config with time_budget and target_mrr" $t \
    --config tta.json --no_checkpoint ds cf
same "gnn valid: the config file's budget stops the run" "time_budget 1" \
    "$(fig cf figures stopped_by epochs)"
same "gnn valid: the manifest records the config file's values" \
    "0.9 1e-06" "$(fig cf config target_mrr time_budget)"

golden "gnn valid: --target_mrr needs --valid_every" 2 \
    "kg-train: --target_mrr needs --valid_every" \
    $t --epochs 2 --target_mrr 0.5 ds nov
check "gnn valid: the refused run left no output" test ! -e nov
echo '{"model_name": "RGCN", "target_mrr": 0.5}' >nov.json
golden "gnn valid: --target_mrr needs --valid_every in a config file" 2 \
    "kg-train: --target_mrr needs --valid_every" \
    $t --config nov.json ds nov
check "gnn valid: the refused config left no output" test ! -e nov
expect_fail "gnn valid: --target_mrr above 1 is refused" 2 \
    "target_mrr: 1.5 is out of range" $t --valid_every 1 \
    --target_mrr 1.5 ds nov
expect_fail "gnn valid: a negative --time_budget is refused" 2 \
    "time_budget: -1 is out of range" $t --time_budget -1 ds nov

if command -v mpirun >/dev/null; then
	expect_fail "gnn valid: not on several ranks" 1 "one rank" \
	    timeout 60 mpirun --oversubscribe -np 2 $t --epochs 1 \
	    --valid_every 1 ds mbad
	check "gnn valid: refused run left no output" test ! -e mbad
else
	skip_section 2 "gnn valid: mpirun is not installed"
fi
