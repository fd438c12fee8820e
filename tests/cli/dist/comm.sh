# lib/dist's collectives and point-to-point transfers, checked by
# build/aux/dist_check as a plain process and under mpirun with 2, 3 and
# 4 ranks (the checker prints the ok/not ok lines itself, from rank 0).
source "$KG_TOP/tests/cli/lib.sh"
plan 48

if ! command -v mpirun >/dev/null; then
	skip_all "dist comm: mpirun is not installed"
fi
chk=$KG_BUILD/aux/dist_check
"$chk" || notok "dist comm: plain process exited with $?"
for n in 2 3 4; do
	timeout 60 mpirun --oversubscribe -np "$n" "$chk" ||
	    notok "dist comm: $n ranks exited with $?"
done
