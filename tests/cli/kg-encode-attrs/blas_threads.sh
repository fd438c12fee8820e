# The fitted encoder (and so every feature) does not depend on the number
# of OpenBLAS threads: the same inputs give the same bytes.
. "$KG_TOP/tests/cli/lib.sh"
plan 1
"$KG_BUILD/aux/kg_gen_enterprise" -o ent -n 2000 -s 1 >/dev/null 2>&1
kg-ingest -q -o ds --types ent/types.tsv --train ent/train.tsv \
    --valid ent/valid.tsv --test ent/test.tsv
OPENBLAS_NUM_THREADS=2 kg-encode-attrs fit -q -d ds -s ent/schema.json -o m2
OPENBLAS_NUM_THREADS=1 kg-encode-attrs fit -q -d ds -s ent/schema.json -o m1
n=0 bad=
for f in m1/*.npy; do
	n=$((n + 1))
	cmp -s "$f" "m2/$(basename "$f")" || bad="$bad $(basename "$f")"
done
if [ "$n" -gt 0 ] && [ -z "$bad" ]; then
	ok "fit with 1 and 2 BLAS threads: $n arrays identical"
else
	notok "fit differs with the BLAS thread count:$bad"
fi
