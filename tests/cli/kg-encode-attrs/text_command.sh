#!/usr/bin/env bash
# --text-command: texts go one per line to an external encoder whose
# float32 output becomes the text features.
source "$KG_TOP/tests/cli/lib.sh"
plan 16
if ! command -v perl >/dev/null 2>&1; then
	skip_all "text command: perl not available"
fi
printf 'a\tr\tb\nb\tr\tc\nc\tr\td\n' >triples.tsv
kg-ingest -q -o ds --train triples.tsv || notok "ingest"
printf 'a\tbio\thello world\nc\tbio\tbye\nc\tbio\tnow\n' >t.tsv
printf '{"tables": [{"path": "t.tsv", "form": "long"}],
  "attributes": {"bio": {"kind": "text", "dim": 2}}}\n' >s.json
# The "encoder": (length of the text, its line number) as float32.
enc='perl -ne '\''chomp; print pack("f<2", length($_), $.)'\'''
check "fit with a text command" \
    kg-encode-attrs fit -d ds -s s.json -o model --text-command "$enc"
check "the model records the command" grep -q 'pack' model/model.json
check "transform runs it" kg-encode-attrs transform -d ds -m model -o feat
# Entities a, c have text ("hello world": 11; "bye now": 7), b, d none.
got=$(od -An -v -tf4 -w8 feat/bio.npy | tail -n 4 | tr -s ' ' | sed 's/^ //')
want=$(printf '11 1\n0 0\n7 2\n0 0')
if [ "$got" = "$want" ]; then ok "vectors from the command"; else
	notok "vectors from the command: got '$got'"; fi
check "has_bio marks a and c" \
    sh -c "[ \"\$(tail -c 4 feat/has_bio.npy | od -An -tu1 | tr -d ' \n')\" = 1010 ]"
expect_fail "a failing command" 1 "exited with status 5" \
    kg-encode-attrs transform -d ds -m model -o bad --text-command 'exit 5'
expect_fail "a command with short output" 1 "expected 16" \
    kg-encode-attrs transform -d ds -m model -o bad --text-command 'head -c 3'
check "no output left" test ! -e bad

# Issue 12, item 5: the command runs in its own process group and is
# stopped with the tool.  (A background job of a script ignores SIGINT,
# so the signals sent here are SIGTERM and SIGHUP.)
# Under nohup SIGHUP comes in ignored, and a signal ignored at exec stays
# ignored in the tool (POSIX): the HUP case then has nothing to test.
sigs="TERM HUP"
ign=$(awk '/^SigIgn:/ { print $2 }' /proc/$$/status 2>/dev/null)
if [ -n "$ign" ] && [ $((0x$ign & 1)) -ne 0 ]; then
	skip_section 3 "SIGHUP: ignored by whoever started the tests (nohup?)"
	sigs="TERM"
fi
for sig in $sigs; do
	rm -f child.pid
	kg-encode-attrs transform -q -d ds -m model -o killed \
	    --text-command 'echo $$ >child.pid; exec sleep 60' & tool=$!
	for i in $(seq 50); do [ -s child.pid ] && break; sleep 0.1; done
	kill -$sig $tool
	wait $tool
	rc=$?
	child=$(cat child.pid 2>/dev/null)
	check "SIG$sig: the tool dies of it" test "$rc" -gt 128
	if [ -n "$child" ] && ! kill -0 "$child" 2>/dev/null; then
		ok "SIG$sig: the text command is stopped with the tool"
	else
		notok "SIG$sig: the text command is stopped with the tool"
		[ -n "$child" ] && kill "$child"
	fi
	check "SIG$sig: no output or temporary left" \
	    sh -c '! ls -a | grep -q "killed"'
done
# A command that writes too much is stopped, not waited for.
expect_fail "a command with endless output" 1 "wrote more than the 16 bytes" \
    timeout 20 kg-encode-attrs transform -d ds -m model -o bad \
    --text-command 'cat >/dev/null; yes'
check "no output left" test ! -e bad
