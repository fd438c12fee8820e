# build/aux/gen_freebase: a synthetic graph of Freebase86m's shape at a
# tiny scale.  The same seed gives the same bytes and another seed other
# bytes; the counts are Freebase86m's times the scale; the TSV output is
# the dataset's edges; entity degrees are skewed (checked from the TSV,
# not from the generator's own figure); kg-train accepts the dataset and
# a short ComplEx run ranks far above an untrained model (the planted
# clusters are learnable); bad options are refused with nothing written.
source "$KG_TOP/tests/cli/lib.sh"
plan 14

gen=$KG_BUILD/aux/gen_freebase
scale=0.0002
# Freebase86m's counts (entities, relations, train, valid, test) x scale.
want="17211 3 60946 3386 3386"

check "gen_freebase writes a dataset" "$gen" --scale $scale -o g1
"$gen" --scale $scale -o g2
"$gen" --scale $scale --seed 2 -o g3
same=1
for f in entities.tsv relations.tsv train.npy valid.npy test.npy; do
	cmp -s g1/$f g2/$f || same=0
done
check "the same seed gives the same bytes" [ $same = 1 ]
differ=0
cmp -s g1/train.npy g3/train.npy || differ=1
check "another seed gives other edges" [ $differ = 1 ]
got=$(jq -r '.figures | "\(.entities) \(.relations) \(.triples.train) \(.triples.valid) \(.triples.test)"' g1/manifest.json)
check "the manifest's counts are Freebase86m's times $scale ($got)" \
    [ "$got" = "$want" ]
shapes=$(for s in train valid test; do
	"$KG_BUILD/aux/npy_tool" dump g1/$s.npy | cut -d' ' -f3
done | tr '\n' ' ')
check "the arrays hold those counts ($shapes)" \
    [ "$shapes" = "$(echo "$want" | cut -d' ' -f3-) " ]
check "the manifest records the generator and kg-ingest's layout" \
    [ "$(jq -r '"\(.tool) \(.config.generator)"' g1/manifest.json)" = \
    "kg-ingest gen_freebase" ]

"$gen" --scale $scale --tsv train >train.tsv
npysum=$("$KG_BUILD/aux/npy_tool" dump g1/train.npy | cut -d' ' -f5)
tsvsum=$(awk -F'\t' '{ s += $1 + $2 + $3 } END { printf "%.6f", s }' train.tsv)
check "the TSV output is the dataset's train edges ($tsvsum, $npysum)" \
    [ "$(wc -l <train.tsv)" -eq 60946 -a "$tsvsum" = "$npysum" ]

# The top 1% of the 17,211 entities (172) hold this share of the edge
# endpoints: 0.24 here (0.38 at scale 1); uniform degrees would give
# about 0.02.
share=$(awk -F'\t' '{ d[$1]++; d[$3]++ } END { for (e in d) print d[e] }' \
    train.tsv | sort -rn | awk -v n=17211 -v m=60946 \
    'NR <= int(n / 100) { s += $1 } END { printf "%.3f", s / (2 * m) }')
check "entity degrees are skewed: the top 1% hold $share of the endpoints" \
    awk -v s="$share" 'BEGIN { exit !(s > 0.20) }'
rshare=$(cut -f2 train.tsv | sort | uniq -c | sort -rn | head -1 |
    awk '{ printf "%.3f", $1 / 60946 }')
check "relation frequencies are skewed: the first of 3 holds $rshare" \
    awk -v s="$rshare" 'BEGIN { exit !(s > 0.45) }'

# Trained against untrained (a learning rate of 1e-12: the initial
# rows), both ranked against 1,000 uniform negatives, unfiltered.
hp="-q --model_name ComplEx --hidden_dim 64 --num_thread 1 --no_checkpoint
    --batch_size 1000 --neg_sample_size 200 --neg_sampler mixed"
kg-train $hp --epochs 5 g1 m1 && kg-train $hp --epochs 1 --lr 1e-12 g1 m0
trained=$(kg-eval -q --raw --neg-sample 1000 --threads 1 g1 m1 | jq .metrics.both.mrr)
untrained=$(kg-eval -q --raw --neg-sample 1000 --threads 1 g1 m0 | jq .metrics.both.mrr)
check "untrained MRR is chance ($untrained; 1/1001 H(1001) = 0.0075)" \
    awk -v u="$untrained" 'BEGIN { exit !(u > 0 && u < 0.012) }'
check "5 epochs of ComplEx beat it 10-fold ($trained against $untrained)" \
    awk -v t="$trained" -v u="$untrained" 'BEGIN { exit !(t > 0.11 && t > 10 * u) }'

expect_fail "an unknown --tsv split is refused" 2 \
    "--tsv: expected train, valid or test, not 'dev'" "$gen" --tsv dev
expect_fail "an existing output needs -f" 1 \
    "output 'g1' exists" "$gen" --scale $scale --seed 5 -o g1
check "and is left as it was" cmp -s g1/train.npy g2/train.npy
