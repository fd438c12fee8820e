# Shared helpers for the kg-ingest CLI tests (sourced after lib.sh).
here=$KG_TOP/tests/cli/kg-ingest
fix=$KG_TOP/tests/fixtures/ingest

# rows FILE.npy: the array's rows (int32 or int64, 1-D or 2-D),
# tab-separated, decoded with od from the header length and descr; fast
# enough for FB15k-237.  pyrows is the independent pure-Python reader.
rows() {
	local f=$1 hlen off hdr cols=1 size=4 t=d4
	hlen=$(od -An -tu2 -j8 -N2 "$f" | tr -d ' ')
	off=$((10 + hlen))
	hdr=$(head -c "$off" "$f" | tr -d '\000')
	case $hdr in *"'<i8'"*) size=8 t=d8 ;; esac
	if [[ $hdr =~ \'shape\':\ \([0-9]+,\ ([0-9]+)\) ]]; then
		cols=${BASH_REMATCH[1]}
	fi
	[ "$cols" -gt 0 ] || return 0
	od -An -v -t "$t" -w$((cols * size)) -j "$off" "$f" |
	    awk -v OFS='\t' '{ $1 = $1; print }'
}
pyrows() { python3 "$here/npyrows.py" "$1"; }
# shape FILE.npy: "descr dim0 dim1".
shape() { python3 "$here/npyrows.py" --shape "$1"; }

# decode DIR SPLIT: the split's triples as "head<TAB>relation<TAB>tail"
# names, through entities.tsv and relations.tsv.
decode() {
	rows "$1/$2.npy" | awk -F'\t' -v OFS='\t' \
	    -v ent="$1/entities.tsv" -v rel="$1/relations.tsv" '
	BEGIN {
		while ((getline l < ent) > 0) { i = index(l, "\t"); e[substr(l, 1, i - 1)] = substr(l, i + 1) }
		while ((getline l < rel) > 0) { i = index(l, "\t"); r[substr(l, 1, i - 1)] = substr(l, i + 1) }
	}
	{ print e[$1], r[$2], e[$3] }'
}

# fig DIR KEY: a figure from DIR/manifest.json ("triples.train" style).
fig() {
	python3 -c 'import json, sys
v = json.load(open(sys.argv[1] + "/manifest.json"))["figures"]
for k in sys.argv[2].split("."):
    v = v[k]
print(v)' "$1" "$2"
}

# nothing_left NAME: ok if the scratch directory holds no output and no
# temporary directory (anything but the listed inputs).
nothing_left() {
	local name=$1; shift
	local extra
	extra=$(ls -A | grep -v -x -F "$(printf '%s\n' "$@")")
	if [ -z "$extra" ]; then ok "$name"; else notok "$name (left: $extra)"; fi
}

# same NAME FILE1 FILE2: ok if the files are equal (diff shown otherwise).
same() {
	if cmp -s "$2" "$3"; then ok "$1"; else notok "$1"; diff "$2" "$3" | head -20; fi
}
