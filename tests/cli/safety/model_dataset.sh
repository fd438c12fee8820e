# A model used with another dataset (issue 32, item 2).  The same UMLS
# triples ingested in two ID orders (ds1, and ds2 from the train lines
# reversed): a model trained on ds1 gives on ds2 the metrics, answers and
# rows it gives on ds1, mapped by name with a note; a dataset with other
# names (ds3, one entity renamed) is refused by kg-eval, kg-predict,
# kg-export and kg-train --resume, naming both datasets; so is ds2 once
# ds1, needed to map by name, is gone.
source "$KG_TOP/tests/cli/lib.sh"

echo "1..20"
d=$(fixture_data umls)
zcat "$d/train.txt.gz" >train.tsv && zcat "$d/valid.txt.gz" >valid.tsv &&
zcat "$d/test.txt.gz" >test.tsv && tac train.tsv >train2.tsv &&
for s in train valid test; do
	sed 's/^chemical\t/chemicalX\t/; s/\tchemical$/\tchemicalX/' $s.tsv >$s.3.tsv
done &&
kg-ingest -q -o ds1 --train train.tsv --valid valid.tsv --test test.tsv &&
kg-ingest -q -o ds2 --train train2.tsv --valid valid.tsv --test test.tsv &&
kg-ingest -q -o ds3 --train train.3.tsv --valid valid.3.tsv --test test.3.tsv ||
    { notok "ingest"; exit 1; }
check "ds1 and ds2 number their entities differently" \
    sh -c '! cmp -s ds1/entities.tsv ds2/entities.tsv'
check "ds1 and ds3 have as many entities" \
    test "$(wc -l <ds1/entities.tsv)" = "$(wc -l <ds3/entities.tsv)"

kg-train -q --model_name DistMult --hidden_dim 32 --epochs 15 --lr 0.1 \
    --num_thread 1 --seed 1 --keep_checkpoint ds1 m 2>err ||
    { notok "train: $(cat err)"; exit 1; }

mrr() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["metrics"]["both"]["mrr"])' "$1"; }
kg-eval -q ds1 m >e1.json 2>/dev/null
kg-eval ds2 m >e2.json 2>err2
check "kg-eval on ds2 exits 0" test -s e2.json
if python3 -c 'import sys; a, b = map(float, sys.argv[1:]); sys.exit(not (a > 0.3 and abs(a - b) < 1e-6))' \
    "$(mrr e1.json)" "$(mrr e2.json)"; then
	ok "kg-eval: MRR on ds2 $(mrr e2.json) equals that on ds1 $(mrr e1.json)"
else
	notok "kg-eval: MRR on ds2 $(mrr e2.json), on ds1 $(mrr e1.json)"
fi
check "kg-eval says it maps the rows by name" grep -q \
    "^kg-eval: note: model 'm' was trained on dataset 'ds1', which numbers the same names in another order; its rows are mapped to 'ds2' by name$" err2

printf 'chemical\tisa\t?\n?\tisa\tchemical\nchemical\t?\tenzyme\n' >q.tsv
kg-predict -k 5 ds1 m q.tsv >p1.tsv 2>/dev/null
kg-predict -k 5 ds2 m q.tsv >p2.tsv 2>perr
check "kg-predict answers on ds2 as on ds1" sh -c \
    'test -s p1.tsv && cmp -s p1.tsv p2.tsv'
check "kg-predict says it maps the rows by name" grep -q \
    "^kg-predict: note: model 'm' was trained on dataset 'ds1'" perr
kg-export ds1 m 2>/dev/null | sort >x1.tsv
kg-export ds2 m 2>/dev/null | sort >x2.tsv
check "kg-export writes each name's row on ds2 as on ds1" sh -c \
    'test -s x1.tsv && cmp -s x1.tsv x2.tsv'

# Other names: refused, nothing written.
other="model 'm' was trained on dataset 'ds1', whose entity names differ from those of 'ds3'"
expect_fail "kg-eval refuses a dataset with other names" 1 "$other" \
    kg-eval -q -o e3.json ds3 m
check "kg-eval wrote nothing" test ! -e e3.json
expect_fail "kg-predict refuses it" 1 "$other" kg-predict -o p3.tsv ds3 m q.tsv
check "kg-predict wrote nothing" test ! -e p3.tsv
expect_fail "kg-export refuses it" 1 "$other" kg-export -o x3.tsv ds3 m
check "kg-export wrote nothing" test ! -e x3.tsv
expect_fail "--stream cannot read remapped rows" 1 \
    "--stream reads 'm' in its own row order, that of another dataset" \
    kg-eval -q --stream ds2 m

# kg-train --resume: a checkpoint cannot be mapped; another dataset's,
# even in another order only, is refused.
cp -r m.ckpt c1 && cp -r m.ckpt c2
expect_fail "--resume refuses a checkpoint of another ID order" 1 \
    "checkpoint 'c1' was written for a dataset with other entity names or IDs than 'ds2'; resume on the dataset it was written for" \
    kg-train -q --model_name DistMult --hidden_dim 32 --epochs 16 --lr 0.1 \
    --num_thread 1 --resume --checkpoint_dir c1 ds2 r2
check "nothing written by the refused resume" sh -c \
    'test ! -e r2 && diff -r m.ckpt c1 >/dev/null'
expect_fail "--resume refuses a checkpoint of other names" 1 \
    "checkpoint 'c2' was written for a dataset with other entity names" \
    kg-train -q --model_name DistMult --hidden_dim 32 --epochs 16 --lr 0.1 \
    --num_thread 1 --resume --checkpoint_dir c2 ds3 r3
check "--resume on ds1 continues" kg-train -q --model_name DistMult \
    --hidden_dim 32 --epochs 16 --lr 0.1 --num_thread 1 --seed 1 --resume \
    --checkpoint_dir c1 ds1 r1

# Without ds1, the rows cannot be mapped by name.
mv ds1 away
expect_fail "refused when the training dataset is gone" 1 \
    "model 'm' was trained on dataset 'ds1', whose entity IDs differ from those of 'ds2', and that dataset is not there" \
    kg-eval -q ds2 m
mv away ds1
