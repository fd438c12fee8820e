#!/usr/bin/env bash
# kg-predict as a coprocess: with its queries on a pipe it answers each
# query as soon as it is read, so a program can write one query, read
# its answers, then write the next.  Every read has a timeout, so a
# kg-predict that waits for the end of its input fails the test instead
# of blocking it.  The answers equal those of the same queries from a
# file; gzip on a pipe still reads.
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-eval/lib.inc"
echo "1..9"

make_umls umls || { notok "ingest umls"; exit 0; }
"$MKMODEL" umls m ComplEx 16 || { notok "make model"; exit 0; }
printf 'virus\tinteracts_with\t?\n' >q1.tsv
printf '?\tlocation_of\tvirus\n' >q2.tsv
cat q1.tsv q2.tsv >q12.tsv
kg-predict -q -k 3 umls m q12.tsv >want.tsv || notok "answers from a file"

# ask FD_IN FD_OUT QUERYFILE N: write the query, read N lines (10 s each).
ask() {
	local line i
	cat "$3" >&"$1"
	for ((i = 0; i < $4; i++)); do
		IFS= read -r -t 10 -u "$2" line || return 1
		printf '%s\n' "$line"
	done
}

# Default --batch: a pipe is answered as far as it has arrived.
coproc P { timeout 60 kg-predict -q -k 3 umls m; }
# Bash unsets P_PID once the coprocess has ended: keep it now.
ppid=$P_PID
ask "${P[1]}" "${P[0]}" q1.tsv 4 >got.tsv
check "first answer (header + 3) before the input ends" test $? -eq 0
ask "${P[1]}" "${P[0]}" q2.tsv 3 >>got.tsv
check "second answer after the second query" test $? -eq 0
exec {P[1]}>&-
wait "$ppid"
check "exit 0 when the input ends" test $? -eq 0
check "answers equal those of a file" cmp -s got.tsv want.tsv

# --batch 1, JSON, on named pipes: the QUERIES operand and stdout.
mkfifo qfifo ofifo
timeout 60 kg-predict -q -k 3 --batch 1 --format json umls m qfifo >ofifo &
pid=$!
exec {r}<ofifo {w}>qfifo
ask "$w" "$r" q1.tsv 1 >j1.json
check "--batch 1, a FIFO operand: JSON answer before the input ends" \
    test $? -eq 0 -a "$(jq -r '.answers | length' j1.json 2>/dev/null)" = 3
exec {w}>&-
wait "$pid"
check "FIFO: exit 0" test $? -eq 0
exec {r}<&-

# Nearest entities with a one-letter answer pending: names of any length.
cut -f2 umls/entities.tsv | head -1 >n1.txt
coproc N { timeout 60 kg-predict -q --nearest -k 2 --no-header umls m; }
npid=$N_PID		# (unset by bash once the coprocess ends)
ask "${N[1]}" "${N[0]}" n1.txt 2 >near.tsv
check "nearest: answered before the input ends" test $? -eq 0
exec {N[1]}>&-
wait "$npid"

gzip -c q12.tsv | kg-predict -q -k 3 umls m >gz.tsv
check "gzip through a pipe: exit 0" test $? -eq 0
check "gzip through a pipe: the same answers" cmp -s gz.tsv want.tsv
