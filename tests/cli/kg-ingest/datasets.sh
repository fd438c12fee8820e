# Real datasets: the bundled UMLS always; FB15k-237 and WN18RR from
# $KG_SHARED_DATA when present.  Published counts, and every array decodes
# through entities.tsv/relations.tsv to exactly the input lines.
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-ingest/helpers.bash"
plan 31

py=$(numpy_python)

# ingest_check NAME DIR ENTITIES RELATIONS TRAIN VALID TEST
ingest_check() {
	local name=$1 d=$2 s
	kg-ingest -q -o "$name" --train "$d/train.txt.gz" --valid "$d/valid.txt.gz" \
	    --test "$d/test.txt.gz"
	check "$name: exit 0" test $? -eq 0
	check "$name: $3 entities, $4 relations, $5/$6/$7 triples" \
	    test "$(fig "$name" entities) $(fig "$name" relations) $(fig "$name" triples.train) $(fig "$name" triples.valid) $(fig "$name" triples.test)" = "$3 $4 $5 $6 $7"
	for s in train valid test; do
		gzip -dc "$d/$s.txt.gz" >want.$s
		decode "$name" $s >got.$s
		same "$name: $s.npy maps back to the input lines" want.$s got.$s
	done
	check "$name: int32 arrays" test "$(shape "$name/train.npy")" = "<i4 $5 3"
	# Train entities first: the IDs used in train are exactly 0..k-1.
	check "$name: train entities numbered first" test "$(rows "$name/train.npy" |
	    awk -F'\t' '{ s[$1]; s[$3]; if ($1 > m) m = $1; if ($3 > m) m = $3 }
	    END { n = 0; for (k in s) n++; print (m + 1 == n) }')" = 1
	if [ -n "$py" ]; then
		check "$name: numpy.load counts and ID ranges" "$py" -c '
import sys, numpy
d = sys.argv[1]
ne, nr = int(sys.argv[2]), int(sys.argv[3])
for s, n in zip(("train", "valid", "test"), map(int, sys.argv[4:7])):
    a = numpy.load(d + "/" + s + ".npy")
    assert a.dtype == numpy.int32 and a.shape == (n, 3), (s, a.dtype, a.shape)
    assert a[:, [0, 2]].min() >= 0 and a[:, [0, 2]].max() < ne
    assert a[:, 1].min() >= 0 and a[:, 1].max() < nr
' "$name" "$3" "$4" "$5" "$6" "$7"
		"$py" "$here/npyrows.py" --numpy "$name/valid.npy" >np.rows
		rows "$name/valid.npy" >od.rows
		same "$name: numpy.load gives the same values" od.rows np.rows
	else
		skip_section 2 "$name: numpy.load counts: no numpy"
	fi
}

ingest_check umls "$(fixture_data umls)" 135 46 5216 652 661
rows umls/test.npy >od.rows
pyrows umls/test.npy >py.rows
same "umls: the od and the pure-Python .npy readers agree" od.rows py.rows

d=$(shared_data fb15k-237)
if [ -n "$d" ]; then
	ingest_check fb15k-237 "$d" 14541 237 272115 17535 20466
	check "fb15k-237: 37 valid/test triples with unseen entities kept" \
	    test "$(fig fb15k-237 unseen_kept)" = 37
	kg-ingest -q -o fbdrop --unseen drop --train "$d/train.txt.gz" \
	    --valid "$d/valid.txt.gz" --test "$d/test.txt.gz"
	check "fb15k-237 --unseen drop: 9 valid and 28 test triples dropped" \
	    test "$(fig fbdrop triples.valid) $(fig fbdrop triples.test) $(fig fbdrop entities)" = "17526 20438 14505"
else
	skip_section 11 "fb15k-237: KG_SHARED_DATA has no fb15k-237"
fi

d=$(shared_data wn18rr)
if [ -n "$d" ]; then
	ingest_check wn18rr "$d" 40943 11 86835 3034 3134
	check "wn18rr: leading zeros kept" grep -q '^0	00260881$' wn18rr/entities.tsv
else
	skip_section 10 "wn18rr: KG_SHARED_DATA has no wn18rr"
fi
