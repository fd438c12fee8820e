# SIGTERM and SIGINT while kg-ingest reads (stdin held open) leave the old
# dataset as it was and no temporary behind (issue 32, item 6).
source "$KG_TOP/tests/cli/lib.sh"
plan 8

printf 'a\tr\tb\nb\tr\tc\n' >a.tsv
kg-ingest -q -o d a.tsv || { notok "ingest"; exit 0; }
cp -r d d.orig
mkfifo in
for sig in TERM INT; do
	# The writer keeps the pipe open; kg-ingest waits for more input.
	sleep 60 >in &
	writer=$!
	# A shell without job control starts background commands with
	# SIGINT ignored (which kg-ingest keeps, as nohup asks): undo that.
	env --default-signal=INT kg-ingest -q -f -o d - <in &
	pid=$!
	# Wait (up to 20 s) until the run's temporary exists: then it reads.
	for i in $(seq 200); do
		ls -A | grep -q "^\.d\.tmp\.$pid\$" && break
		sleep 0.1
	done
	check "SIG$sig: the temporary exists while it reads" test -e .d.tmp.$pid
	kill -$sig $pid
	wait $pid
	rc=$?
	kill $writer 2>/dev/null
	wait $writer 2>/dev/null
	want=$((128 + $(kill -l $sig)))
	check "SIG$sig: it died of the signal (exit $want)" test $rc -eq $want
	check "SIG$sig: the old dataset is intact" diff -r d.orig d
	left=$(ls -A | grep -E '\.tmp\.|\.dead$|\.old\.')
	check "SIG$sig: no temporary left${left:+ ($left)}" test -z "$left"
done
