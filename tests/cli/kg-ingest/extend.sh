# --extend OLD: OLD's IDs and names kept with new names after them, OLD's
# splits kept, repeats dropped; extending twice equals extending once with
# both deltas; a delta of OLD's own triples changes nothing; bad OLDs.
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-ingest/helpers.bash"
plan 21

umls=$(fixture_data umls)
gzip -dc "$umls/train.txt.gz" >all.tsv
head -n 3000 all.tsv >base.tsv
sed -n 3001,4000p all.tsv >d1.tsv
sed -n 4001,5000p all.tsv >d2.tsv
gzip -dc "$umls/valid.txt.gz" | head -n 200 >bv.tsv
gzip -dc "$umls/test.txt.gz" | head -n 200 >bt.tsv
# Entities that umls's first 3000 lines lack, so the deltas add names.
printf 'new_a\tisa\tnew_b\nnew_b\tisa\tcell\n' >>d1.tsv
printf 'new_c\tisa\tnew_a\n' >>d2.tsv
cat d1.tsv d2.tsv >d12.tsv

kg-ingest -q -o old --train base.tsv --valid bv.tsv --test bt.tsv
kg-ingest -q --extend old -o new1 --train d1.tsv
kg-ingest -q --extend new1 -o new2 --train d2.tsv
kg-ingest -q --extend old -o new12 --train d12.tsv

ne=$(wc -l <old/entities.tsv); nr=$(wc -l <old/relations.tsv)
same "every old entity keeps its ID and name" old/entities.tsv \
    <(head -n "$ne" new1/entities.tsv)
same "every old relation keeps its ID and name" old/relations.tsv \
    <(head -n "$nr" new1/relations.tsv)
check "new names come after the old ones" \
    grep -qx "$ne	new_a" new1/entities.tsv
for s in train valid test; do
	same "old $s triples stay in $s, first" <(rows old/$s.npy) \
	    <(rows new1/$s.npy | head -n "$(rows old/$s.npy | wc -l)")
done
check "a valid or test triple given again is not moved to train" \
    test "$(fig new1 triples.valid) $(fig new1 triples.test)" = \
    "$(fig old triples.valid) $(fig old triples.test)"
check "the new train holds old and new triples, once each" test \
    "$(decode new1 train | sort -u | wc -l) $(fig new1 triples.train)" = \
    "$(cat base.tsv d1.tsv | sort -u | wc -l) $(cat base.tsv d1.tsv | sort -u | wc -l)"
for f in entities.tsv relations.tsv train.npy valid.npy test.npy; do
	same "extended twice = once with both deltas: $f" new2/$f new12/$f
done
check "the manifest names the extended dataset" python3 - <<'PY'
import json, sys
m = json.load(open("new1/manifest.json"))
ins = [i for i in m["inputs"] if i.get("role") == "extends"]
sys.exit(not (len(ins) == 1 and ins[0]["path"] == "old" and
              ins[0]["checksum"].startswith("xxh3-64:")))
PY

# A delta of old triples only, from train, valid and test.
cat base.tsv bv.tsv bt.tsv >again.tsv
kg-ingest -q --extend old -o same --train again.tsv
ok=1
for f in entities.tsv relations.tsv train.npy valid.npy test.npy; do
	cmp -s old/$f same/$f || ok=0
done
check "a delta of old triples only changes nothing" test $ok = 1

# A random split of the new triples; the old keep their splits.
kg-ingest -q --extend old -o sp --split 0.8,0.1,0.1 --seed 3 d12.tsv
m=$(cat d12.tsv | sort -u | wc -l)
check "--split splits only the new triples" test \
    "$(( $(fig sp triples.valid) - $(fig old triples.valid) ))" = \
    "$(awk -v n="$m" 'BEGIN { printf "%d", n * 0.1 + 0.5 }')"
same "--split keeps old test triples first in test" <(rows old/test.npy) \
    <(rows sp/test.npy | head -n "$(rows old/test.npy | wc -l)")

# Bad OLDs: one line, exit 1, nothing written.
mkdir bad && cd bad
expect_fail "a missing OLD" 1 "'nope' is not a directory" \
    kg-ingest --extend nope -o x ../d1.tsv
cp -r ../old dup
# The name of a later ID made equal to an earlier one of the same length
# (the file keeps its recorded size).
dupline=$(python3 - dup/entities.tsv <<'PY'
import sys
p = sys.argv[1]
rows = [l.rstrip("\n").split("\t") for l in open(p)]
seen = {}
for i, (_, name) in enumerate(rows):
    if len(name) in seen:
        rows[i][1] = rows[seen[len(name)]][1]
        break
    seen[len(name)] = i
open(p, "w").write("".join("%s\t%s\n" % tuple(r) for r in rows))
print(i + 1)
PY
)
expect_fail "a duplicate name in OLD's dictionary" 1 \
    "dup/entities.tsv:$dupline: duplicate entity name" \
    kg-ingest --extend dup -o x ../d1.tsv
mkdir junk && echo '{"x": 1}' >junk/manifest.json
expect_fail "OLD of an unknown format" 1 "not a kgpipe manifest" \
    kg-ingest --extend junk -o x ../d1.tsv
nothing_left "nothing written on error" dup junk
