#!/bin/sh
# Rebuilds the fuzzers' seed corpus (tests/fuzz/corpus/<target>/) and the
# small dataset the manifest harness reads (tests/fuzz/data/dataset/) from
# the repository's own examples and fixtures.  Needs the tools in bin/
# (make) and python3 with numpy.  The seeds are committed; run this only
# to change them.  A tabread seed starts with the two option bytes of
# tests/fuzz/tabread_ref.h.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
c=tests/fuzz/corpus
rm -rf "$c" tests/fuzz/data
mkdir -p "$c/tabread_tsv" "$c/tabread_csv" "$c/tabread_gzip" "$c/npy" \
    "$c/manifest" "$c/attrs_schema" "$c/config" tests/fuzz/data
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# opts FLAGS DELIM: the two option bytes (octal escapes for printf).
opts() { printf "$1$2"; }

# Triples: a few lines of UMLS (TSV), the tiny fixtures (comments, blank
# lines), CRLF line ends, a header; CSV with quotes and a quoted newline.
zcat examples/data/umls/train.txt.gz | head -n 12 >"$tmp/umls.tsv"
{ opts '\003' '\t'; cat "$tmp/umls.tsv"; } >"$c/tabread_tsv/umls"
{ opts '\036' '\t'; cat tests/fixtures/ingest/tiny_train.tsv; } \
    >"$c/tabread_tsv/tiny"
{ opts '\007' '\t'; printf 'h\tr\tt\r\n# note\r\n\r\na\tb\tc\r\nd\te\t\r\n'; } \
    >"$c/tabread_tsv/crlf"
{ opts '\030' ';'; printf 'a;b;c\nd;;f;g\n\n;x\nlast;line'; } \
    >"$c/tabread_tsv/semicolon"
{ opts '\023' ','; cat tests/fixtures/ingest/quoted.csv; } \
    >"$c/tabread_csv/quoted"
{ opts '\030' ','; printf '"multi\nline",r,"t ""q"""\r\na,b,c\n"",,\n'; } \
    >"$c/tabread_csv/multiline"
{ opts '\032' ','; tr '\t' ',' <"$tmp/umls.tsv"; } >"$c/tabread_csv/umls"
{ opts '\003' '\t'; gzip -9n <"$tmp/umls.tsv"; } >"$c/tabread_gzip/umls"
{ opts '\226' '\t'; cat tests/fixtures/ingest/tiny_train.tsv | gzip -n
  printf 'x\ty\tz\n' | gzip -n; } >"$c/tabread_gzip/two-members"
{ opts '\123' ','; cat tests/fixtures/ingest/quoted.csv; } \
    >"$c/tabread_gzip/quoted-csv"

# A small dataset (with node types) whose manifest seeds the manifest
# harness and whose files that harness loads.
d=tests/fixtures/ingest
bin/kg-ingest -q -o "$tmp/ds" --types $d/types.tsv --train $d/tiny_train.tsv \
    --valid $d/tiny_valid.tsv --test $d/tiny_test.tsv
mkdir tests/fuzz/data/dataset
for f in train.npy valid.npy test.npy types.npy entities.tsv \
    relations.tsv types.tsv; do
	cp "$tmp/ds/$f" tests/fuzz/data/dataset/
done
cp "$tmp/ds/manifest.json" "$c/manifest/dataset.json"
bin/kg-partition -q -p 2 -m random -o "$tmp/p2" "$tmp/ds"
cp "$tmp/p2/manifest.json" "$c/manifest/partition.json"

# Arrays: what kgpipe writes, and numpy's own headers.
cp "$tmp/ds/train.npy" "$c/npy/kgpipe-train.npy"
cp "$tmp/p2/$(cd "$tmp/p2" && ls ./*.npy | head -n 1)" "$c/npy/kgpipe-part.npy"
py=
for p in /usr/bin/python3 python3; do
	if "$p" -c 'import numpy' 2>/dev/null; then py=$p; break; fi
done
[ -n "$py" ] || { echo "make-corpus.sh: python3 with numpy is needed" >&2; exit 1; }
"$py" - "$c/npy" <<'PY'
import sys
import numpy as np
d = sys.argv[1]
np.save(d + "/i4.npy", np.arange(12, dtype="<i4").reshape(4, 3))
np.save(d + "/f4.npy", np.linspace(0, 1, 10, dtype="<f4").reshape(2, 5))
np.save(d + "/u1.npy", np.arange(7, dtype="u1"))
np.save(d + "/i8-scalar.npy", np.array(5, dtype="<i8"))
np.save(d + "/f8-empty.npy", np.zeros((0, 3), dtype="<f8"))
np.save(d + "/u8-3d.npy", np.ones((2, 1, 2), dtype="<u8"))
PY

# Attribute schemas and --config files, as shipped.
cp examples/enterprise/schema.json "$c/attrs_schema/enterprise.json"
cp examples/schemas/litwd1k.json "$c/attrs_schema/litwd1k.json"
for f in rgcn_ray relgnn_ray complex_fb15k transe_l1_fb15k pbg_fb15k237; do
	cp examples/configs/$f.json "$c/config/$f.json"
done
