# kg-train --disk_dtype float16: the buffer store's partition files keep
# the entity rows as binary16 (lib/core/f16.h), the optimiser state,
# checkpoints and the model as float32.  Rows come back from the files
# exactly binary16, the files take half the bytes (a file size limit one
# float16 partition fits and a float32 one does not), a kill -9 resumed
# gives the bits of the run that never stopped, a checkpoint is float32
# .npy, early stopping keeps the best epoch's rows through the float16
# files, a value beyond 65504 is refused naming its partition, and a
# resume with the other dtype or float16 without the buffer is refused.
source "$KG_TOP/tests/cli/lib.sh"
plan 20

py=$(numpy_python)
if [ -z "$py" ]; then
	skip_all "ooc f16: python3 with numpy is not installed"
fi
d=$(fixture_data umls)
kg-ingest -q -o ds --train "$d/train.txt.gz" --valid "$d/valid.txt.gz" \
    --test "$d/test.txt.gz" || { notok "ooc f16: ingest umls"; exit 1; }
for p in 4 5; do
	kg-partition -q -m random -p $p -o p$p ds ||
	    { notok "ooc f16: partition umls into $p"; exit 1; }
done
args="-q --model_name ComplEx --hidden_dim 8 --seed 3 --batch_size 256
    --neg_sample_size 16 --num_thread 1"
h="--disk_dtype float16"

# Every value of a float32 array exactly a binary16 one (or not: NOT=1).
exact() {	# FILE...
	"$py" -c '
import numpy as np, sys
for f in sys.argv[1:]:
    a = np.load(f)
    assert a.dtype == np.float32, (f, a.dtype)
    assert (a.astype(np.float16).astype(np.float32) == a).all(), f
' "$@"
}

# Every epoch ends by writing the changed partitions back (rounded to
# what the files hold), so every row of the model was last written to a
# file: exactly binary16, with checkpoints or without.
kg-train $args $h --keep_checkpoint --epochs 2 --partitions p4 \
    --buffer_capacity 2 ds m 2>err || notok "ooc f16: train: $(cat err)"
check "ooc f16: every entity row of the model is exactly binary16" \
    exact m/entities.npy
check "ooc f16: the checkpoint's partitions are float32 .npy, binary16 values" \
    eval 'exact m.ckpt/entities-p*.npy && [ "$(ls m.ckpt/entities-p*.npy | wc -l)" = 4 ]'
check "ooc f16: the optimiser state is float32, not rounded" "$py" -c '
import numpy as np
s = np.load("m/entity_state.npy")
assert s.dtype == np.float32
assert (s.astype(np.float16).astype(np.float32) != s).any()
'
check "ooc f16: the config records disk_dtype float16" \
    grep -q '"disk_dtype": "float16"' m/manifest.json
check "ooc f16: kg-eval reads the model" eval 'kg-eval -q ds m >ev.json &&
    grep -q "\"mrr\"" ev.json'
kg-train $args $h --no_checkpoint --epochs 2 --partitions p4 \
    --buffer_capacity 2 ds nc 2>/dev/null
check "ooc f16: --no_checkpoint too: every entity row exactly binary16" \
    exact nc/entities.npy

# The bytes moved: a row is 8 floats and 1 of state, 36 bytes in
# float32 files, 8 * 2 + 4 = 20 in float16 ones.
kg-train $args --no_checkpoint --epochs 2 --partitions p4 \
    --buffer_capacity 2 ds nc32 2>/dev/null
fig() { grep -o "\"$2\": [0-9]*" "$1/manifest.json" | tr -dc 0-9; }
check "ooc f16: bytes read and written 20/36 of float32's" eval \
    '[ "$(fig nc bytes_written)" -gt 0 ] &&
    [ $(( $(fig nc bytes_written) * 36 )) = $(( $(fig nc32 bytes_written) * 20 )) ] &&
    [ $(( $(fig nc bytes_read) * 36 )) = $(( $(fig nc32 bytes_read) * 20 )) ]'

# The files themselves: rows of 64 floats, a size limit that the
# largest partition's binary16 rows fit (no header) and its float32
# rows (twice the bytes) do not.  float32 fails at its first write-back;
# float16 trains every epoch and fails only writing the float32 model.
big="$args --hidden_dim 64 --no_checkpoint --epochs 1 --partitions p4
    --buffer_capacity 2 --swap_dir swap"
mkdir swap
lim=$("$py" -c '
import numpy as np
off = np.load("p4/part_offsets.npy"); most = int((off[1:] - off[:-1]).max())
kib = (most * 64 * 2 + 1023) // 1024
assert most * 64 * 4 > kib * 1024
print(kib)')
e32=$( (trap '' XFSZ; ulimit -f $lim; exec kg-train $big ds lim32) 2>&1)
e16=$( (trap '' XFSZ; ulimit -f $lim; exec kg-train $big $h ds lim16) 2>&1)
check "ooc f16: float32 partition files exceed ${lim} KiB" eval \
    'grep -Eq "cannot write partition [0-9]+ to .swap.: File too large" <<<"$e32"'
check "ooc f16: float16 ones fit, only the float32 model does not" eval \
    '! grep -q "cannot write partition" <<<"$e16" &&
    grep -q "File too large" <<<"$e16" && [ -z "$(ls -A swap)" ]'

# Killed (SIGKILL) in the middle of epoch 2, then resumed: the bits of a
# run that never stopped.
KG_TEST_KILL_STATE=2:4 kg-train $args $h --epochs 3 --partitions p5 \
    --buffer_capacity 2 --swap_dir swap ds killed 2>/dev/null
check "ooc f16: the kill hook killed the run" test $? -eq 137
kg-train $args $h --epochs 3 --partitions p5 --buffer_capacity 2 \
    --swap_dir swap --resume ds killed 2>/dev/null
kg-train $args $h --epochs 3 --partitions p5 --buffer_capacity 2 ds whole \
    2>/dev/null
check "ooc f16: resumed after kill -9 equals the uninterrupted run" eval \
    'cmp -s killed/entities.npy whole/entities.npy &&
    cmp -s killed/entity_state.npy whole/entity_state.npy &&
    cmp -s killed/relations.npy whole/relations.npy'
KG_TEST_KILL_STATE=2:4 kg-train $args $h --epochs 3 --partitions p5 \
    --buffer_capacity 2 ds other 2>/dev/null
expect_fail "ooc f16: a float16 checkpoint resumed as float32 is refused" 1 \
    "checkpoint '.*other.ckpt' was trained with --disk_dtype float16; resume it with the same \(not float32\)" \
    kg-train $args --epochs 3 --partitions p5 --buffer_capacity 2 \
    --resume ds other

# Early stopping keeps the best epoch through the store's snapshot (the
# float16 partition files kept open, read back widened): killed between
# the best epoch and the stop and resumed, the bits of the run that never
# stopped, and the model's valid MRR the best the loop saw.
t="kg-train -q --model_name DistMult --hidden_dim 16 --num_thread 1 --seed 5
    --batch_size 256 --neg_sample_size 16 --lr 0.5 --epochs 30
    --partitions p4 --buffer_capacity 2 $h --valid_every 1 --patience 4"
jf() { jq -r ".figures.$2" "$1/manifest.json"; }
$t ds vfull 2>/dev/null
best=$(jf vfull best_epoch) last=$(jf vfull epochs)
KG_TEST_KILL_AFTER_CKPT=$((last - 2)):KILL $t ds vpart 2>/dev/null
$t --resume ds vpart 2>/dev/null
check "ooc f16: early stop after the best epoch ($best < $((last - 2)) < $last)" \
    test "$(jf vfull stopped_by)" = early_stopping -a "$best" -lt $((last - 2))
check "ooc f16: killed after a checkpoint past the best, resumed: the same bits" \
    eval 'cmp -s vfull/entities.npy vpart/entities.npy &&
    cmp -s vfull/relations.npy vpart/relations.npy &&
    [ "$(jf vpart best_valid_mrr)" = "$(jf vfull best_valid_mrr)" ]'
check "ooc f16: the model holds the best epoch's rows (valid MRR $(jf vfull best_valid_mrr))" \
    eval 'kg-eval -q --split valid ds vfull | jq -e --argjson b "$(jf vfull best_valid_mrr)" \
    "(.metrics.both.mrr - \$b) | fabs < 1e-9" >/dev/null'

# A row value beyond binary16's range fails its write-back, naming it.
"$py" -c '
import numpy as np
e = np.load("m/entities.npy"); e[7, 3] = 1e6
np.save("big.npy", e)'
expect_fail "ooc f16: |x| > 65504 refused, naming the partition" 1 \
    "^kg-train: partition [0-9]+: row [0-9]+ holds 1e\+06, outside float16's range" \
    kg-train $args $h --no_checkpoint --epochs 1 --partitions p4 \
    --buffer_capacity 2 --init_entities big.npy ds bad
check "ooc f16: and leaves no model dir" test ! -e bad

expect_fail "ooc f16: float16 without the buffer" 1 \
    "disk_dtype float16 needs --buffer_capacity or --mem_budget" \
    kg-train $args $h --no_checkpoint --partitions p4 ds x
KG_TRAIN_SEAM=cpu expect_fail "ooc f16: float16 under a device buffer (the CPU seam)" 1 \
    "disk_dtype float16 needs --buffer_capacity or --mem_budget, on the CPU" \
    kg-train $args $h --no_checkpoint --partitions p4 --buffer_capacity 2 \
    --gpu_buffer 2 ds x
expect_fail "ooc f16: a bad dtype" 2 "disk_dtype must be float32 or float16, not 'bf16'" \
    kg-train $args --disk_dtype bf16 --partitions p4 --buffer_capacity 2 ds x
