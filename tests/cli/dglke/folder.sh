#!/usr/bin/env bash
# A DGL-KE dataset folder made from UMLS (entities.dict, relations.dict,
# train/valid/test.tsv holding IDs) is ingested with --dglke and with a
# copied DGL-KE data command line, keeping DGL-KE's IDs, and trained with
# a copied dglke_train command line; built_in folders (names), raw_udd
# and bad folders too.
source "$KG_TOP/tests/cli/lib.sh"
plan 38

U=$(fixture_data umls)
mkdir -p data/umls_udd data/UMLS
for s in train valid test; do zcat "$U/$s.txt.gz" >"$s.names"; done
# IDs in an order of DGL-KE's own (sorted names), not kgpipe's.
cat train.names valid.names test.names | awk -F'\t' '{ print $1; print $3 }' |
    sort -u | awk '{ printf "%d\t%s\n", NR - 1, $0 }' >data/umls_udd/entities.dict
cat train.names valid.names test.names | cut -f2 | sort -u |
    awk '{ printf "%d\t%s\n", NR - 1, $0 }' >data/umls_udd/relations.dict
for s in train valid test; do
	awk -F'\t' -v ef=data/umls_udd/entities.dict -v rf=data/umls_udd/relations.dict '
	    BEGIN { while ((getline l < ef) > 0) { split(l, a, "\t"); e[a[2]] = a[1] }
	            while ((getline l < rf) > 0) { split(l, a, "\t"); r[a[2]] = a[1] } }
	    { print e[$1] "\t" r[$2] "\t" e[$3] }' "$s.names" >data/umls_udd/$s.tsv
done
check "udd folder made" test "$(wc -l <data/umls_udd/train.tsv)" -eq 5216

kg-ingest -q -o ds --dglke data/umls_udd
check "--dglke folder exit 0" test $? -eq 0
check "entity IDs are the dictionary's" cmp -s ds/entities.tsv data/umls_udd/entities.dict
check "relation IDs are the dictionary's" cmp -s ds/relations.tsv data/umls_udd/relations.dict
py=$(numpy_python)
if [ -n "$py" ]; then
	"$py" - <<'PY' || notok "npy contents: python exited with status $?"
import numpy as np
for s in ("train", "valid", "test"):
    a = np.load("ds/%s.npy" % s)
    b = np.loadtxt("data/umls_udd/%s.tsv" % s, dtype=np.int32, delimiter="\t").reshape(-1, 3)
    print(("ok - " if np.array_equal(a, b) else "not ok - ") + "%s.npy equals %s.tsv" % (s, s))
PY
else
	skip_section 3 "npy contents: no numpy"
fi

# The data options of a dglke_train command line, copied as they are.
kg-ingest -q -o ds2 --data_path data/umls_udd --format udd_hrt \
    --data_files entities.dict relations.dict train.tsv valid.tsv test.tsv
check "udd_hrt with --data_files exit 0" test $? -eq 0
check "udd_hrt = --dglke" sh -c 'cmp -s ds/train.npy ds2/train.npy &&
    cmp -s ds/test.npy ds2/test.npy && cmp -s ds/entities.tsv ds2/entities.tsv'
# Three files: no valid or test split.
kg-ingest -q -o ds3 --data_path data/umls_udd --format udd_hrt \
    --data_files entities.dict relations.dict train.tsv
check "udd with 3 files: exit 0" test $? -eq 0
check "udd with 3 files: same train" cmp -s ds3/train.npy ds/train.npy
check "udd with 3 files: empty valid" grep -q '"valid": 0' ds3/manifest.json

# A copied dglke_train command line (ComplEx, -de -dr) trains on it; the
# data, save and evaluation options are ignored with what to use instead.
kg-train --model_name ComplEx --data_path data/umls_udd --format udd_hrt \
    --data_files entities.dict relations.dict train.tsv valid.tsv test.tsv \
    --save_path ckpts --hidden_dim 16 -de -dr --gamma 143.0 --lr 0.1 \
    --max_step 40 --batch_size 256 --neg_sample_size 32 --log_interval 10 \
    --batch_size_eval 16 --test --valid -adv -rc 2e-6 --num_thread 1 \
    --num_proc 1 --gpu -1 --neg_deg_sample --no_checkpoint ds model 2>warn.txt
check "copied dglke_train line: exit 0" test $? -eq 0
check "warning: --save_path -> MODEL_DIR" grep -q "ignoring DGL-KE option --save_path: the model directory is the MODEL_DIR operand" warn.txt
check "warning: --valid -> --valid_every" grep -q "ignoring DGL-KE option --valid: use --valid_every N" warn.txt
check "warning: --data_files -> kg-ingest" grep -q "ignoring DGL-KE option --data_files: make DATASET_DIR with kg-ingest" warn.txt
check "warning: --test -> kg-eval" grep -q "ignoring DGL-KE option --test: evaluate with kg-eval" warn.txt
if [ -n "$py" ]; then
	"$py" - <<'PY' || notok "ComplEx -de -dr rows: python exited with status $?"
import numpy as np
e, r = np.load("model/entities.npy"), np.load("model/relations.npy")
# DGL-KE: -de -dr double both rows: 2 x 16 floats, 16 complex numbers.
ok = e.shape == (135, 32) and r.shape == (46, 32)
print(("ok - " if ok else "not ok - ") + "ComplEx -de -dr rows as DGL-KE: %s %s" % (e.shape, r.shape))
PY
else
	skip "ComplEx -de -dr rows as DGL-KE: no numpy"
fi
kg-eval -q ds model >/dev/null
check "kg-eval on the folder's dataset" test $? -eq 0

# built_in: DATA_PATH/DATASET with entities.dict and train.txt by names.
cp data/umls_udd/*.dict data/UMLS/
for s in train valid test; do cp "$s.names" "data/UMLS/$s.txt"; done
kg-ingest -q -o bi --data_path data --dataset UMLS --format built_in
check "built_in exit 0" test $? -eq 0
check "built_in = udd (same IDs)" sh -c 'cmp -s bi/train.npy ds/train.npy &&
    cmp -s bi/valid.npy ds/valid.npy && cmp -s bi/entities.tsv ds/entities.tsv'
kg-ingest -q -o bi2 --dglke data/UMLS
check "--dglke detects names" cmp -s bi2/train.npy ds/train.npy
# DGL-KE's --format defaults to built_in: --dataset alone means it
# (issue 32, item 12); another --format with it is refused.
kg-ingest -q -o bi3 --data_path data --dataset UMLS
check "--dataset alone is built_in" sh -c 'cmp -s bi3/train.npy bi/train.npy &&
    cmp -s bi3/entities.tsv bi/entities.tsv'
expect_fail "--dataset with --format tsv" 2 \
    "^kg-ingest: --dataset goes with --format built_in, not --format tsv$" \
    kg-ingest -q -o bi4 --data_path data --dataset UMLS --format tsv
check "and nothing is written" test ! -e bi4

# raw_udd: names, columns in the order the format says.
awk -F'\t' '{ print $3 "\t" $1 "\t" $2 }' train.names >data/raw_trh.tsv
kg-ingest -q -o raw --data_path data --format raw_udd_thr --data_files raw_trh.tsv
kg-ingest -q -o raw_ref --train train.names
check "raw_udd_thr = plain names" cmp -s raw/train.npy raw_ref/train.npy
# A comma delimiter, as DGL-KE's docs show.
mkdir -p data/comma
sed 's/\t/,/' data/umls_udd/entities.dict >data/comma/entities.dict
sed 's/\t/,/' data/umls_udd/relations.dict >data/comma/relations.dict
tr '\t' ',' <data/umls_udd/train.tsv >data/comma/train.tsv
kg-ingest -q -o cm -d , --dglke data/comma
check "comma delimiter" cmp -s cm/train.npy ds/train.npy

# Bad folders and dictionaries: file:line, no output left.
mkdir -p bad
cp data/umls_udd/relations.dict data/umls_udd/train.tsv bad/
golden "folder without entities.dict" 1 \
    "kg-ingest: 'bad' has no entities.dict (a DGL-KE dataset folder holds entities.dict, relations.dict and train.tsv or train.txt)" \
    kg-ingest -q -o x --dglke bad
sed '5d' data/umls_udd/entities.dict >bad/entities.dict
golden "an ID past the count" 1 \
    "kg-ingest: bad/entities.dict:134: ID 134 is past the count of names (IDs run from 0 with no gap)" \
    kg-ingest -q -o x --dglke bad
{ cat data/umls_udd/entities.dict; echo "3	again"; } >bad/entities.dict
sed -i '135d' bad/entities.dict
golden "an ID twice" 1 "kg-ingest: bad/entities.dict:135: ID 3 was given before" \
    kg-ingest -q -o x --dglke bad
{ sed '$d' data/umls_udd/entities.dict; echo "134	$(sed -n 1p data/umls_udd/entities.dict | cut -f2)"; } >bad/entities.dict
golden "a name twice" 1 "kg-ingest: bad/entities.dict:135: name '$(sed -n 1p data/umls_udd/entities.dict | cut -f2)' was given ID 0 before" \
    kg-ingest -q -o x --dglke bad
cp data/umls_udd/entities.dict bad/
printf '0\t0\t1\n0\t999\t1\n' >bad/train.tsv
golden "a relation ID out of range" 1 "kg-ingest: bad/train.tsv:2: relation '999' is not an ID below 46" \
    kg-ingest -q -o x --data_path bad --format udd_hrt --data_files entities.dict relations.dict train.tsv
printf '%s\tno_such_relation\t%s\n' "$(sed -n 1p bad/entities.dict | cut -f2)" "$(sed -n 2p bad/entities.dict | cut -f2)" >bad/train.txt
rm bad/train.tsv
mkdir -p data/BAD && cp bad/* data/BAD/
golden "built_in: an unknown name" 1 "kg-ingest: data/BAD/train.txt:1: relation 'no_such_relation' is not in the dictionary" \
    kg-ingest -q -o x --data_path data --dataset BAD --format built_in
check "no output after errors" test ! -e x
expect_fail "udd needs 3 or 5 files" 2 "takes 3 or 5 --data_files, got 2" \
    kg-ingest -o x --format udd_hrt --data_files a b
expect_fail "built_in needs --dataset" 2 "needs --dataset NAME" \
    kg-ingest -o x --format built_in
expect_fail "--data_files needs a DGL-KE format" 2 "needs --format raw_udd_hrt or udd_hrt" \
    kg-ingest -o x --data_files a b c
expect_fail "bad column order" 2 "'hrx' is not an order" \
    kg-ingest -o x --format udd_hrx --data_files a b c
