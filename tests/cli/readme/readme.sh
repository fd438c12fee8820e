# The README's shell blocks, run as written (readme.py says how and what
# is checked) in a scratch directory that looks like the repository's top:
# bin/, build/aux/ and examples/ are links to the built tree, so the
# blocks' relative paths work and nothing is written into the repository.
# The ETL block's /data/kg is rewritten into the scratch directory (made
# first, as an ETL job's data directory would be), and its dump/*.tsv.gz
# are the bundled UMLS files.
source "$KG_TOP/tests/cli/lib.sh"
# readme.py prints the plan (it follows the README's commands).

if ! command -v mpirun >/dev/null || ! command -v python3 >/dev/null; then
	skip_all "readme: mpirun or python3 is not installed"
fi
if [ ! -x "$KG_BUILD/aux/kg_gen_enterprise" ]; then
	skip_all "readme: kg_gen_enterprise is not built"
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
top=$(pwd)/top
mkdir -p "$top/build" "$top/dump" "$top/data/kg" "$top/.shim"
ln -s "$KG_BIN" "$top/bin"
ln -s "$KG_BUILD/aux" "$top/build/aux"
ln -s "$KG_TOP/examples" "$top/examples"
for s in train valid test; do
	cp "$KG_TOP/examples/data/umls/$s.txt.gz" "$top/dump/umls-$s.tsv.gz"
done
# The python line needs numpy: the python3 that has it goes first in
# PATH; without one that line is skipped.
py=$(numpy_python)
if [ -n "$py" ]; then
	ln -s "$py" "$top/.shim/python3"
	PATH=$top/.shim:$PATH
else
	export READMETEST_NO_NUMPY=1
fi
cd "$top" && READMETEST_REWRITE="/data/kg=$top/data/kg" \
    python3 "$KG_TOP/tests/cli/readme/readme.py" "$KG_TOP/README.md" \
    "$KG_TOP"/man/man7/kgpipe.7 "$KG_TOP"/man/man7/kgpipe-distributed.7 \
    "$KG_TOP"/man/man7/kgpipe-ooc.7 "$KG_TOP"/man/man7/kgpipe-migrate.7 \
    "$KG_TOP"/man/man7/kgpipe-gnn.7 "$KG_TOP"/man/man7/kgpipe-enterprise.7 \
    "$KG_TOP"/man/man7/kgpipe-gpu.7
