# lib/'s layer order (lib/LAYERS): the tree as it is passes
# tests/tools/layers.py, and a copy of lib/ with one planted fault (an
# include upwards, one sideways, two files including each other, a folder
# the order does not list) fails it with a line naming that fault.
source "$KG_TOP/tests/cli/lib.sh"
echo "1..5"

if ! command -v python3 >/dev/null; then
	for n in tree upwards sideways cycle unlisted; do
		skip "layers $n: python3 is not installed"
	done
	exit 0
fi
layers=$KG_TOP/tests/tools/layers.py
check "layers: the tree keeps its layer order" \
    python3 "$layers" "$KG_TOP"

# plant NAME PATTERN EDIT...: a fresh copy of lib/, changed by the shell
# command EDIT run inside it, must fail the check with a line matching
# PATTERN.
plant() {
	local name=$1 pat=$2 out rc; shift 2
	rm -rf copy && mkdir copy && cp -R "$KG_TOP/lib" copy/lib
	(cd copy/lib && eval "$*")
	out=$(python3 "$layers" copy 2>&1)
	rc=$?
	if [ "$rc" -ne 1 ]; then
		notok "layers $name (exit $rc; output: $out)"
	elif ! grep -Eq -- "$pat" <<<"$out"; then
		notok "layers $name (output '$out' does not match '$pat')"
	else
		ok "layers $name"
	fi
}
plant "refuses an include upwards" \
    '^lib/core/util.c:[0-9]+: includes "app/train_run.h" upwards' \
    'echo "#include \"app/train_run.h\"" >>core/util.c'
plant "refuses an include sideways" \
    '^lib/ingest/ingest.c:[0-9]+: includes "store/store.h" sideways' \
    'echo "#include \"store/store.h\"" >>ingest/ingest.c'
plant "refuses two files that include each other" \
    'files include each other: kge/model -> kge/score' \
    'echo "#include \"kge/score.h\"" >>kge/model.c'
plant "refuses a folder it does not list" \
    '^lib/extra: folder not in lib/LAYERS' \
    'mkdir extra && echo "int x;" >extra/x.c'
