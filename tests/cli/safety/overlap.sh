# No tool writes over what it reads (issue 32, item 1).  For every tool
# and every output it writes (model dir, checkpoint dir, swap dir, output
# file), the output is one of the inputs, lies inside one, or holds one,
# with and without --force: the tool must exit 1 with a message naming
# both paths, and leave every input, and the directory around them, as it
# was (checksums of every file and name before and after).
#
# Each case runs in a fresh copy W of the inputs (ent, ds, am, s0, feat,
# p2, x2, model, q.tsv), so that a tool that did destroy an input
# cannot spoil the cases after it.
source "$KG_TOP/tests/cli/lib.sh"

cases=0
enterprise_fixture 200 2 || { echo "1..1"; notok "safety: fixture"; exit 1; }
mkdir src && cp -r ent src/ && mv ds am s0 feat p2 x2 src/ &&
kg-train -q --model_name DistMult --hidden_dim 8 --epochs 1 --num_thread 1 \
    --no_checkpoint src/ds src/model &&
printf '%s\t%s\t?\n' "$(cut -f2 src/ds/entities.tsv | head -1)" \
    "$(cut -f2 src/ds/relations.tsv | head -1)" >src/q.tsv &&
ln -s ds src/x.ckpt ||
    { echo "1..1"; notok "safety: train a model"; exit 1; }
rm -f p* x* 2>/dev/null

have_mpi=0
command -v mpirun >/dev/null && have_mpi=1
MPI="timeout 60 mpirun --oversubscribe -np 2"

# Every file under $1 with its checksum, and every name (empty
# directories and hidden temporaries included).
tree_sum() { (cd "$1" && find . | LC_ALL=C sort && find . -type f -print0 |
    LC_ALL=C sort -z | xargs -0 md5sum) | md5sum; }

# t NAME FORCE PATTERN COMMAND: in a fresh copy W of src, COMMAND (a
# string evaluated with W set, and F set to "" and then to FORCE) must
# exit 1 with a stderr line matching PATTERN (evaluated too) and change
# nothing under W.  Two checks.
n=0
t() {
	local name=$1 force=$2 pat=$3 cmd=$4 F W before err rc
	for F in "" "$force"; do
		n=$((n + 1))
		W=w$n
		cp -r src "$W"
		before=$(tree_sum "$W")
		err=$(eval "$cmd" 2>&1 >/dev/null)
		rc=$?
		if [ "$rc" -ne 1 ]; then
			notok "$name${F:+ $F}: exit $rc, wanted 1: $err"
		elif ! grep -Eq -- "$(eval "echo \"$pat\"")" <<<"$err"; then
			notok "$name${F:+ $F}: stderr '$err' does not match $(eval "echo \"$pat\"")"
		elif [ "$(tree_sum "$W")" != "$before" ]; then
			notok "$name${F:+ $F}: files under the inputs changed"
		else
			ok "$name${F:+ $F}"
		fi
		rm -rf "$W"
	done
}

# The three ways an output meets an input, as patterns.
IS="is the input"
IN="is inside the input"
HOLDS="is inside the"

echo "1..90"

# kg-ingest: the triples files are its inputs.
t "kg-ingest: output is a triples file" -f "output '\$W/ent/data/train.tsv' $IS" \
    'kg-ingest -q $F -o $W/ent/data/train.tsv --train $W/ent/data/train.tsv'
t "kg-ingest: output holds a triples file" -f "input '\$W/ent/data/train.tsv' $HOLDS output '\$W/ent'" \
    'kg-ingest -q $F -o $W/ent --train $W/ent/data/train.tsv'
t "kg-ingest: output through .. is a triples file" -f "output '\$W/ent/../ent/data/train.tsv' $IS" \
    'kg-ingest -q $F -o $W/ent/../ent/data/train.tsv --train $W/ent/data/train.tsv'

# kg-encode-attrs fit: dataset and schema.
t "fit: output is the dataset" -f "output '\$W/ds' $IS '\$W/ds'" \
    'kg-encode-attrs fit -q $F -d $W/ds -s $W/ent/data/schema.json -o $W/ds'
t "fit: output inside the dataset" -f "output '\$W/ds/m' $IN '\$W/ds'" \
    'kg-encode-attrs fit -q $F -d $W/ds -s $W/ent/data/schema.json -o $W/ds/m'
t "fit: output holds the dataset" -f "input '\$W/ds' $HOLDS output '\$W'" \
    'kg-encode-attrs fit -q $F -d $W/ds -s $W/ent/data/schema.json -o $W'

# transform: dataset and encoder model.
t "transform: output is the encoder" -f "output '\$W/am' $IS '\$W/am'" \
    'kg-encode-attrs transform -q $F -d $W/ds -m $W/am -o $W/am'
t "transform: output inside the encoder" -f "output '\$W/am/s' $IN '\$W/am'" \
    'kg-encode-attrs transform -q $F -d $W/ds -m $W/am -o $W/am/s'
t "transform: output holds the encoder" -f "input '\$W/(ds|am)' $HOLDS output '\$W'" \
    'kg-encode-attrs transform -q $F -d $W/ds -m $W/am -o $W'

# merge: encoder model and shards.
t "merge: output is a shard" -f "output '\$W/s0' $IS '\$W/s0'" \
    'kg-encode-attrs merge -q $F -m $W/am -o $W/s0 $W/s0'
t "merge: output inside a shard" -f "output '\$W/s0/f' $IN '\$W/s0'" \
    'kg-encode-attrs merge -q $F -m $W/am -o $W/s0/f $W/s0'
t "merge: output holds a shard" -f "input '\$W/(am|s0)' $HOLDS output '\$W'" \
    'kg-encode-attrs merge -q $F -m $W/am -o $W $W/s0'

# kg-partition: the dataset.
t "kg-partition: output is the dataset" -f "output '\$W/ds' $IS '\$W/ds'" \
    'kg-partition -q $F -p 2 -o $W/ds $W/ds'
t "kg-partition: output inside the dataset" -f "output '\$W/ds/p' $IN '\$W/ds'" \
    'kg-partition -q $F -p 2 -o $W/ds/p $W/ds'
t "kg-partition: output holds the dataset" -f "input '\$W/ds' $HOLDS output '\$W'" \
    'kg-partition -q $F -p 2 -o $W $W/ds'

# kg-expand: dataset, partitions, features.
t "kg-expand: output is the partitions" -f "output '\$W/p2' $IS '\$W/p2'" \
    'kg-expand -q $F -k 1 -F $W/feat -p $W/p2 -o $W/p2 $W/ds'
t "kg-expand: output inside the features" -f "output '\$W/feat/x' $IN '\$W/feat'" \
    'kg-expand -q $F -k 1 -F $W/feat -p $W/p2 -o $W/feat/x $W/ds'
t "kg-expand: output holds the dataset" -f "input '\$W/(ds|p2|feat)' $HOLDS output '\$W'" \
    'kg-expand -q $F -k 1 -F $W/feat -p $W/p2 -o $W $W/ds'

# kg-train, shallow: the model dir and the checkpoint dir against the
# dataset (the case of issue 32: --force DATASET DATASET).
TR="-q --model_name DistMult --hidden_dim 8 --epochs 1 --num_thread 1"
t "kg-train: output is the dataset" --force "output '\$W/ds' $IS '\$W/ds'" \
    'kg-train $TR $F $W/ds $W/ds'
t "kg-train: output is the dataset through .." --force "output '\$W/ds/../ds' $IS '\$W/ds'" \
    'kg-train $TR $F $W/ds $W/ds/../ds'
t "kg-train: output inside the dataset" --force "output '\$W/ds/m' $IN '\$W/ds'" \
    'kg-train $TR $F $W/ds $W/ds/m'
t "kg-train: output holds the dataset" --force "input '\$W/ds' $HOLDS output '\$W'" \
    'kg-train $TR $F $W/ds $W'
t "kg-train: checkpoint dir is the dataset" --force "checkpoint '\$W/ds' $IS '\$W/ds'" \
    'kg-train $TR $F --checkpoint_dir $W/ds $W/ds $W/m'
t "kg-train: checkpoint dir inside the dataset" --force "checkpoint '\$W/ds/c' $IN '\$W/ds'" \
    'kg-train $TR $F --checkpoint_dir $W/ds/c $W/ds $W/m'
t "kg-train: checkpoint dir holds the dataset" --force "input '\$W/ds' $HOLDS checkpoint '\$W'" \
    'kg-train $TR $F --checkpoint_dir $W $W/ds $W/m'
# The default checkpoint dir OUTPUT.ckpt is the dataset, through the
# symlink x.ckpt.
t "kg-train: OUTPUT.ckpt is the dataset" --force "checkpoint '\$W/x.ckpt' $IS '\$W/ds'" \
    'kg-train $TR $F $W/ds $W/x'

# kg-train on partition buckets, 2 ranks: dataset and partitions, and
# the swap dir of the out-of-core store.
BK="-q --model_name DistMult --hidden_dim 8 --epochs 1 --num_thread 1 --partitions \$W/p2"
if [ $have_mpi -eq 1 ]; then
	t "kg-train buckets: output is the partitions" --force "output '\$W/p2' $IS '\$W/p2'" \
	    '$MPI kg-train $(eval echo $BK) $F $W/ds $W/p2'
	t "kg-train buckets: output inside the dataset" --force "output '\$W/ds/m' $IN '\$W/ds'" \
	    '$MPI kg-train $(eval echo $BK) $F $W/ds $W/ds/m'
	t "kg-train buckets: output holds the partitions" --force "input '\$W/(ds|p2)' $HOLDS output '\$W'" \
	    '$MPI kg-train $(eval echo $BK) $F $W/ds $W'
	t "kg-train buckets: checkpoint dir inside the partitions" --force "checkpoint '\$W/p2/c' $IN '\$W/p2'" \
	    '$MPI kg-train $(eval echo $BK) $F --checkpoint_dir $W/p2/c $W/ds $W/m'
else
	for i in 1 2 3 4 5 6 7 8; do skip "kg-train buckets: mpirun is not installed"; done
fi
t "kg-train buckets: swap dir inside the dataset" --force "swap dir '\$W/ds' $IS '\$W/ds'" \
    'kg-train $(eval echo $BK) $F --buffer_capacity 2 --swap_dir $W/ds $W/ds $W/m'

# kg-train, GNN: dataset, features and expanded parts.
GN="-q --model_name RGCN --layers 1 --gnn_hidden 8 --hidden_dim 8 --epochs 1 --features \$W/feat"
t "kg-train gnn: output is the features" --force "output '\$W/feat' $IS '\$W/feat'" \
    'kg-train $(eval echo $GN) $F $W/ds $W/feat'
t "kg-train gnn: output inside the dataset" --force "output '\$W/ds/m' $IN '\$W/ds'" \
    'kg-train $(eval echo $GN) $F $W/ds $W/ds/m'
t "kg-train gnn: output holds the expanded parts" --force "input '\$W/(ds|feat|x2)' $HOLDS output '\$W'" \
    'kg-train $(eval echo $GN) $F --expanded $W/x2 $W/ds $W'
t "kg-train gnn: checkpoint dir is the expanded parts" --force "checkpoint '\$W/x2' $IS '\$W/x2'" \
    'kg-train $(eval echo $GN) $F --expanded $W/x2 --checkpoint_dir $W/x2 $W/ds $W/m'
t "kg-train gnn: checkpoint dir inside the features" --force "checkpoint '\$W/feat/c' $IN '\$W/feat'" \
    'kg-train $(eval echo $GN) $F --checkpoint_dir $W/feat/c $W/ds $W/m'

# kg-eval -o: dataset and model.
t "kg-eval: output is the model dir" --force "output '\$W/model' $IS '\$W/model'" \
    'kg-eval -q $F -o $W/model $W/ds $W/model'
t "kg-eval: output inside the model dir" --force "output '\$W/model/entities.npy' $IN '\$W/model'" \
    'kg-eval -q $F -o $W/model/entities.npy $W/ds $W/model'
t "kg-eval: output holds the dataset" --force "input '\$W/(ds|model)' $HOLDS output '\$W'" \
    'kg-eval -q $F -o $W $W/ds $W/model'

# kg-export -o: dataset and model; a file (tsv) or a directory
# (projector).
t "kg-export: output inside the dataset" --force "output '\$W/ds/entities.tsv' $IN '\$W/ds'" \
    'kg-export -q $F -o $W/ds/entities.tsv $W/ds $W/model'
t "kg-export: projector output is the model" --force "output '\$W/model' $IS '\$W/model'" \
    'kg-export -q $F --format projector -o $W/model $W/ds $W/model'
t "kg-export: projector output holds the model" --force "input '\$W/(ds|model)' $HOLDS output '\$W'" \
    'kg-export -q $F --format projector -o $W $W/ds $W/model'

# kg-predict -o: dataset, model and the queries file.
t "kg-predict: output is the queries" --force "output '\$W/q.tsv' $IS '\$W/q.tsv'" \
    'kg-predict -q $F -o $W/q.tsv $W/ds $W/model $W/q.tsv'
t "kg-predict: output inside the model" --force "output '\$W/model/relations.npy' $IN '\$W/model'" \
    'kg-predict -q $F -o $W/model/relations.npy $W/ds $W/model $W/q.tsv'
t "kg-predict: output holds the dataset" --force "input '\$W/(ds|model|q.tsv)' $HOLDS output '\$W'" \
    'kg-predict -q $F -o $W $W/ds $W/model $W/q.tsv'
