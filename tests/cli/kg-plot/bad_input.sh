#!/usr/bin/env bash
# Bad inputs and usage: exit 1 (2 for usage) with a clear message, and
# never an output file or a leftover temporary; an existing output is
# kept unless --force.
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-plot/lib.inc"
plan 60

make_model m --model_name DistMult --epochs 2 ||
	{ notok "train a model"; exit 0; }

# no_output NAME: nothing written, no temporary.
no_output() {
	if [ -z "$(ls -A out)" ]; then ok "$1: no output"; else
		notok "$1: left $(ls -A out)"; fi
}
mkdir out
: >empty.jsonl
printf '\n\n' >blank.jsonl
printf '{"epoch": 1, "loss": 0.5}\n{"epoch": 2, "loss": 0.4\n' >cut.jsonl
printf '{"epoch": 1, "loss": 0.5}\nhello\n' >text.jsonl
printf '{"epoch": 2, "loss": 0.5}\n{"epoch": 1, "loss": 0.4}\n' >order.jsonl
printf '{"epoch": 1, "loss": "x"}\n' >loss.jsonl
printf '{"epoch": 1, "loss": 0.5, "valid_mrr": 7}\n' >mrr.jsonl
printf '{"metrics": {"both": {"n": 1}}}\n' >report.json
printf '{\n  "metrics": {\n' >cutreport.json
cp -r m nolog && rm nolog/train_log.jsonl
mkdir notmodel
for c in "empty.jsonl|empty.jsonl: no epochs in the training log" \
    "blank.jsonl|blank.jsonl: no epochs" \
    "cut.jsonl|cut.jsonl:2: not a JSON object" \
    "text.jsonl|text.jsonl:2: not a JSON object" \
    "order.jsonl|order.jsonl:2: epoch 1 after epoch 2" \
    "loss.jsonl|loss.jsonl:1: no number \"loss\"" \
    "mrr.jsonl|mrr.jsonl:1: \"valid_mrr\" is not a number in \[0, 1\]" \
    "report.json|report.json: metrics.both: \"mrr\" is not a number" \
    "cutreport.json|cutreport.json:3: " \
    "nolog|model directory 'nolog' has no train_log.jsonl" \
    "notmodel|'notmodel' has no manifest.json" \
    "missing|cannot open 'missing'"; do
	in=${c%%|*} msg=${c#*|}
	expect_fail "$in rejected" 1 "^kg-plot: $msg" kg-plot -o out/x "$in"
	no_output "$in"
	expect_fail "$in rejected by --script" 1 "^kg-plot: $msg" \
	    kg-plot --script "$in"
done

cp -r m v99
sed -i 's/"format_version": 1/"format_version": 99/' v99/manifest.json
expect_fail "unknown format version" 3 "version" kg-plot -o out/x v99
no_output "unknown format version"

expect_fail "gnuplot missing" 1 \
    "^kg-plot: gnuplot not found .*install it .*gnuplot-nox" \
    env GNUPLOT=/nonexistent/gnuplot kg-plot -o out/x m
no_output "gnuplot missing"
expect_fail "gnuplot failing" 1 "^kg-plot: 'false' failed \(exit 1\)" \
    env GNUPLOT=false kg-plot -o out/x.png m
no_output "gnuplot failing"
# A gnuplot that succeeds without drawing.
printf '#!/bin/sh\nexit 0\n' >lazy && chmod +x lazy
expect_fail "gnuplot drawing nothing" 1 "wrote no picture for 'out/x.svg'" \
    env GNUPLOT=$PWD/lazy kg-plot -o out/x.svg m
no_output "gnuplot drawing nothing"
expect_fail "output directory missing" 1 "cannot create a temporary" \
    kg-plot -o nodir/x.png m

expect_fail "no output" 2 "no output \(-o FILE or --script\)" kg-plot m
expect_fail "no input" 2 "expected one input" kg-plot -o out/x
expect_fail "two inputs" 2 "expected one input" kg-plot -o out/x m m
expect_fail "pdf" 2 "writes .png or .svg" kg-plot -o out/x.pdf m
expect_fail "bad --size" 2 "--size" kg-plot --size 10x10 -o out/x m
expect_fail "bad --size form" 2 "expected WIDTHxHEIGHT" kg-plot --size 640 -o out/x m
expect_fail "bad --direction" 2 "unknown direction 'up'" kg-plot -d up -o out/x m
expect_fail "--direction on curves" 2 "applies to a kg-eval report" \
    kg-plot -d head -o out/x m
expect_fail "unknown option" 2 "^kg-plot: unrecognized option '--bogus'$" kg-plot --bogus m
no_output "usage errors"

if ! have_gnuplot; then
	skip_section 5 "existing outputs: gnuplot not installed (apt-get install gnuplot-nox)"
	exit 0
fi
echo keep >out/x.png
expect_fail "existing output" 1 "output 'out/x.png' exists; use --force" \
    kg-plot -o out/x.png m
check "existing output kept" test "$(cat out/x.png)" = keep
check "--force replaces it" kg-plot -q -f -o out/x.png m
check "replaced by a PNG" png_ok out/x.png - -
check "no temporary left" test "$(ls -A out)" = x.png
