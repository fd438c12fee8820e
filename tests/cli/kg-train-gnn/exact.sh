# GNN training on 2 and 4 ranks equals one process on the same global
# batches: build/aux/gnn_ssgd_check runs lib/gnntrain's step on each
# rank's share of fixed batches and, beside it, the whole batches as one
# process, and compares the losses, the averaged dense gradients, the
# parameters (dense, relations, learned rows by global ID) and their
# Adam moments within a relative 1e-5, with and without exchanged shared
# negatives (--neg_exchange); 5 cases of 15 checks a run (the checker
# prints the ok/not ok lines itself, from rank 0).  The plain process checks the harness
# (another node numbering than the reference's), not the collectives,
# which return early at one rank.
source "$KG_TOP/tests/cli/lib.sh"
plan 225

chk=$KG_BUILD/aux/gnn_ssgd_check
if ! command -v mpirun >/dev/null; then
	skip_all "gnn exact: mpirun is not installed"
fi
"$chk" || notok "gnn exact: plain process exited with $?"
for n in 2 4; do
	timeout 120 mpirun --oversubscribe -np "$n" "$chk" ||
	    notok "gnn exact: $n ranks exited with $?"
done
