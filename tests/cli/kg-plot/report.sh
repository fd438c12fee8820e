#!/usr/bin/env bash
# Metrics per relation: the data kg-plot extracts from a kg-eval
# --per-relation report equal the report's values (read here with
# python3), the names come through intact, and the pictures hold four
# series of bars per direction.
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-plot/lib.inc"
plan 11

make_model m --model_name DistMult --epochs 3 ||
	{ notok "train a model"; exit 0; }
kg-eval -q --per-relation -o r.json umls m || { notok "kg-eval"; exit 0; }
kg-eval -q -o plain.json umls m || { notok "kg-eval"; exit 0; }

# expect_data REPORT SCRIPT: $rel rows and the names array equal the
# report, the whole split first, NaN for null.
expect_data() {
	datablock "$2" '$rel' >rel.got
	py '
import json, math, re, sys
rep = json.load(open(sys.argv[1]))
rows = [("(all)", rep["metrics"])] + [
    (e.get("name", "relation %d" % e["relation"]), e)
    for e in rep.get("per_relation", [])]
got = [l.split() for l in open(sys.argv[3]) if l.strip()]
if len(got) != len(rows):
    sys.exit(1)
for i, ((name, m), g) in enumerate(zip(rows, got)):
    want = [i, m["both"]["n"]]
    for side in ("both", "head", "tail"):
        for k in ("mrr", "hits@1", "hits@3", "hits@10"):
            v = m[side][k]
            want.append(float("nan") if v is None else v)
    for w, x in zip(want, map(float, g)):
        if not (math.isnan(w) and math.isnan(x) or
                abs(w - x) <= 1e-9 * max(1.0, abs(w))):
            sys.exit(1)
    if len(g) != len(want):
        sys.exit(1)
script = open(sys.argv[2]).read()
names = re.search(r"^array names\[(\d+)\] = \[(.*)\]$", script, re.M)
quoted = ["\x27" + n.replace("\x27", "\x27\x27") + "\x27" for n, _ in rows]
sys.exit(0 if names and int(names.group(1)) == len(rows) and
         names.group(2) == ", ".join(quoted) else 1)
' "$1" "$2" rel.got
}

kg-plot --script r.json >r.gp
check "--script exits 0" test $? -eq 0
check "data equal the report" expect_data r.json r.gp
check "one row per relation in the report, plus the split" \
    test "$(wc -l <rel.got)" -eq "$(py 'import json, sys
print(len(json.load(open(sys.argv[1]))["per_relation"]) + 1)' r.json)"
kg-plot --script plain.json >plain.gp
check "a report without relations: the split alone" expect_data plain.json plain.gp
check "three panels of four series" test "$(grep -c "title 'MRR'" r.gp)" -eq 3

# A relation name with quotes, '#' and a backslash survives.
py '
import json, sys
r = json.load(open(sys.argv[1]))
r["per_relation"][0]["name"] = "#it\x27s \"odd\" \\ <&>"
json.dump(r, open(sys.argv[2], "w"))
' r.json odd.json
kg-plot --script odd.json >odd.gp
check "odd names: data and names equal the report" expect_data odd.json odd.gp

if ! have_gnuplot; then
	skip_section 5 "pictures: gnuplot not installed (apt-get install gnuplot-nox)"
	exit 0
fi
# svg_bars SVG REPORT SIDES...: four series per panel; each series has a
# bar for every relation whose value is visibly above 0 and none for
# undefined values (plus its key sample).
svg_bars() {
	py '
import json, math, sys, xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
rep = json.load(open(sys.argv[2]))
rows = [rep["metrics"]] + rep.get("per_relation", [])
groups = [g for g in ET.parse(sys.argv[1]).iter(ns + "g")
          if (g.get("id") or "").startswith("gnuplot_plot_")]
series = [(s, k) for s in sys.argv[3:]
          for k in ("mrr", "hits@1", "hits@3", "hits@10")]
if len(groups) != len(series):
    sys.exit(1)
for g, (s, k) in zip(groups, series):
    vals = [r[s][k] for r in rows]
    bars = len(list(g.iter(ns + "polygon"))) - 1
    defined = sum(v is not None for v in vals)
    visible = sum(v is not None and v > 0.01 for v in vals)
    if not visible <= bars <= defined:
        sys.exit(1)
' "$@"
}
kg-plot -q -o rel r.json
check "prefix: exit 0" test $? -eq 0
check "SVG: both, head and tail panels of bars" svg_bars rel.svg r.json both head tail
check "PNG: signature, any size from 100 pixels, plausible bytes" png_ok rel.png - -
kg-plot -q -d head -o head.svg r.json
check "--direction head: one panel" svg_bars head.svg r.json head
kg-plot -q -o odd.svg odd.json
check "odd names: the SVG is well-formed XML with the name" py '
import sys, xml.etree.ElementTree as ET
t = ET.parse(sys.argv[1])
sys.exit(0 if any(e.text == "#it\x27s \"odd\" \\ <&>" for e in t.iter()) else 1)
' odd.svg
