#!/usr/bin/env bash
# Training curves: the data kg-plot extracts equal the log's values (read
# here with python3), for the shallow trainer's log with validation and
# the bucket trainer's log; the PNG and SVG are real pictures with one
# line per series holding every point.
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-plot/lib.inc"
plan 15

make_model m --model_name ComplEx --epochs 5 --valid_every 2 ||
	{ notok "train a model"; exit 0; }

# expect_data LOG SCRIPT: $loss and $valid equal an independent reading.
expect_data() {
	datablock "$2" '$loss' >loss.got
	if grep -q '^\$valid << EOD' "$2"; then datablock "$2" '$valid'; fi >valid.got
	py '
import json, sys
loss, valid, wall = [], [], 0.0
for line in open(sys.argv[1]):
    if not line.strip():
        continue
    o = json.loads(line)
    if "bucket" in o:
        continue
    wall += o["seconds"]
    loss.append((o["epoch"], wall, o["loss"]))
    if "valid_mrr" in o:
        valid.append((o["epoch"], wall, o["valid_mrr"]))
def same(want, path):
    got = [tuple(map(float, l.split())) for l in open(path) if l.strip()]
    return len(got) == len(want) and all(
        abs(g - w) <= 1e-9 * max(1.0, abs(w))
        for gr, wr in zip(got, want) for g, w in zip(gr, wr))
sys.exit(0 if same(loss, sys.argv[2]) and same(valid, sys.argv[3]) else 1)
' "$1" loss.got valid.got
}

kg-plot --script m >m.gp
check "--script exits 0" test $? -eq 0
check "data equal the log (5 epochs, validation at 2, 4, 5)" \
    expect_data m/train_log.jsonl m.gp
check "five epochs, three validations" \
    test "$(wc -l <loss.got) $(wc -l <valid.got)" = "5 3"
check "a log file reads as its model directory" \
    cmp -s <(kg-plot --script m | sed 1,1d | grep -v '^set multiplot') \
    <(kg-plot --script m/train_log.jsonl | sed 1,1d | grep -v '^set multiplot')
check "no terminal without -o" eval '! grep -q "set terminal" m.gp'

# The bucket trainer (two ranks over four partitions) logs every bucket;
# only its epoch lines are curves.
if command -v mpirun >/dev/null 2>&1 &&
    kg-partition -q -m random -p 4 -o p4 umls &&
    mpirun -np 2 kg-train -q --partitions p4 --model_name DistMult \
    --hidden_dim 8 --epochs 3 --num_thread 1 umls mb 2>/dev/null; then
	kg-plot --script mb >mb.gp
	check "bucket log: data equal the epoch lines" expect_data mb/train_log.jsonl mb.gp
	check "bucket log: three epochs, no validation" \
	    test "$(wc -l <loss.got) $(wc -l <valid.got)" = "3 0"
else
	notok "bucket training under mpirun"
fi

if ! have_gnuplot; then
	skip_section 8 "pictures: gnuplot not installed (apt-get install gnuplot-nox)"
	exit 0
fi
kg-plot -q -o curves m
check "prefix: exit 0" test $? -eq 0
check "PNG: signature, 1200 x 800, plausible size" png_ok curves.png 1200 800
check "no temporary left" test "$(ls -A | grep -c '^\.kg-plot')" -eq 0
# svg_series SVG N...: one gnuplot plot group per series, each with one
# line through all of its N points (1 move and N - 1 line segments in
# one path: no key sample, since the panels have no key that could sit
# on a curve).
svg_series() {
	py '
import sys, xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
want = [int(n) for n in sys.argv[2:]]
groups = [g for g in ET.parse(sys.argv[1]).iter(ns + "g")
          if (g.get("id") or "").startswith("gnuplot_plot_")]
got = []
for g in groups:
    paths = [p.get("d") for p in g.iter(ns + "path")]
    if len(paths) != 1 or paths[0].count("M") != 1:
        sys.exit(1)
    got.append(paths[0].count("L") + 1)
sys.exit(0 if got == want else 1)
' "$@"
}
check "SVG: four series (loss, loss by time, MRR, MRR by time)" \
    svg_series curves.svg 5 5 3 3
kg-plot -q --size 640x480 -t "my 'title'" -o one.png m
check "--size: 640 x 480" png_ok one.png 640 480
check "one file for a .png name" test ! -e one.svg
kg-plot -q -o mb.svg mb
check "bucket SVG: two series of three points" svg_series mb.svg 3 3
check "kg-plot names what it wrote" \
    test "$(kg-plot -f -o curves m 2>&1)" = "kg-plot: wrote 'curves.png'
kg-plot: wrote 'curves.svg'"
