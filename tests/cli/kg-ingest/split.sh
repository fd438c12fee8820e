# --split: exact proportions, determinism for a seed, a partition of the
# input in input order, train entities first, --dedup and --unseen with a
# random split.
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-ingest/helpers.bash"
plan 18

umls=$(fixture_data umls)
for s in train valid test; do gzip -dc "$umls/$s.txt.gz"; done >all.tsv
n=$(wc -l <all.tsv)

kg-ingest -o s1 --split 0.8,0.1,0.1 --seed 7 all.tsv
kg-ingest -o s2 --split 0.8,0.1,0.1 --seed 7 - <all.tsv
kg-ingest -o s3 --split 0.8,0.1,0.1 --seed 8 all.tsv
nv=$(awk -v n="$n" 'BEGIN { printf "%d", n * 0.1 + 0.5 }')
check "exact proportions: round(0.1 n) valid and test" \
    test "$(fig s1 triples.train) $(fig s1 triples.valid) $(fig s1 triples.test)" = "$((n - 2 * nv)) $nv $nv"
for f in train.npy valid.npy test.npy entities.tsv relations.tsv; do
	same "same seed, same $f (file or stdin)" s1/$f s2/$f
done
check "another seed, another split" test "$(cmp -s s1/train.npy s3/train.npy; echo $?)" = 1
check "another seed, same proportions" test "$(fig s3 triples.valid)" = "$nv"

for s in train valid test; do decode s1 $s; done | sort >got
sort all.tsv >want
same "the splits are a partition of the input" want got

# Input order kept inside each split; train entities numbered first.
check "input order kept in each split; train entities first" python3 - <<'PY'
import subprocess, sys
pos = {l: i for i, l in enumerate(open("all.tsv").read().splitlines())}
def dec(s):
    return subprocess.run(["bash", "-c", 'source "$KG_TOP/tests/cli/lib.sh" >/dev/null; source "$KG_TOP/tests/cli/kg-ingest/helpers.bash"; decode s1 ' + s],
                          capture_output=True, text=True, check=True).stdout.splitlines()
for s in ("train", "valid", "test"):
    p = [pos[l] for l in dec(s)]
    if p != sorted(p):
        sys.exit("%s not in input order" % s)
ent = [l.split("\t", 1)[1] for l in open("s1/entities.tsv").read().splitlines()]
seen, order = set(), []
for s in ("train", "valid", "test"):
    for l in dec(s):
        h, r, t = l.split("\t")
        for e in (h, t):
            if e not in seen:
                seen.add(e)
                order.append(e)
sys.exit(0 if order == ent else "entity IDs are not in first-seen order")
PY

# --dedup before splitting: the doubled input splits like the single one.
cat all.tsv all.tsv >twice.tsv
kg-ingest -o d --dedup --split 0.8,0.1,0.1 --seed 7 twice.tsv
check "dedup then split: same sizes as the input without copies" \
    test "$(fig d triples.train) $(fig d triples.valid) $(fig d duplicates)" = "$((n - 2 * nv)) $nv $n"
same "dedup then split: the same split" s1/train.npy d/train.npy

# Unseen entities in a random split: singletons "x<i>" (one line each).
awk 'BEGIN { for (i = 0; i < 300; i++) print "hub\tr\tx" i; for (i = 0; i < 300; i++) print "x" i "\tr\thub" }' >star.tsv
kg-ingest -o keep --split 0.6,0.2,0.2 --seed 1 star.tsv
kg-ingest -o drop --split 0.6,0.2,0.2 --seed 1 --unseen drop star.tsv
dropped=$(fig drop dropped.unseen)
check "unseen drop: some triples dropped, counts add up" \
    test "$dropped" -gt 0 -a "$(( $(fig drop triples.valid) + $(fig drop triples.test) + dropped ))" = \
    "$(( $(fig keep triples.valid) + $(fig keep triples.test) ))"
check "unseen keep: counted" test "$(fig keep unseen_kept)" = "$dropped"
ntrain_ent=$(decode drop train | awk -F'\t' '{ print $1; print $3 }' | sort -u | wc -l)
check "unseen drop: every valid/test entity is a train entity" \
    test "$(for s in valid test; do rows drop/$s.npy; done | awk -F'\t' -v k="$ntrain_ent" '$1 >= k || $3 >= k' | wc -l) $(fig drop entities)" = "0 $ntrain_ent"
expect_fail "unseen error: names the input line" 1 \
    "^kg-ingest: star.tsv:[0-9]+: entity 'x[0-9]+' of a (valid|test) triple does not occur in train$" \
    kg-ingest -o err --split 0.6,0.2,0.2 --seed 1 --unseen error star.tsv
check "unseen error: no output" test ! -e err

# Two fractions: no test split.
kg-ingest -o two --split 0.9,0.1 all.tsv
check "two fractions: empty test" test "$(fig two triples.test) $(fig two triples.valid)" = "0 $(awk -v n="$n" 'BEGIN { printf "%d", n * 0.1 + 0.5 }')"
