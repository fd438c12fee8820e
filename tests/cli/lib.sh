# Helpers for end-to-end shell tests; source it from tests/cli/<tool>/*.sh.
# Each check prints a TAP line, "ok - name", "not ok - name" or
# "ok - name # SKIP why", for tests/run.sh to count.  Each script first
# states how many checks it makes ("plan N"); the plan is printed when
# the script exits ("1..N", TAP allows it last), and tests/run.sh fails
# a script that printed fewer or more checks than it planned, so a
# crashed helper or python block cannot make checks vanish.  Tools are
# found in $KG_BIN; the current directory is a fresh scratch directory.
set -u
: "${KG_BIN:?run through tests/run.sh}"
PATH=$KG_BIN:$PATH
export PATH

# plan N: the script makes N checks on a normal run.  Once, before any
# check.  The number does not depend on what is printed, so a check
# that vanishes shows as a difference between the two.
plan() {
	KG_PLAN=$1
	trap 'echo "1..$KG_PLAN"' EXIT
}
# skip_section N "name: why": one skip line in place of the N planned
# checks of a section that cannot run here (a missing optional tool).
skip_section() {
	KG_PLAN=$((KG_PLAN - $1 + 1))
	skip "$2"
}
# skip_all "name: why": the whole script cannot run here; one skip line.
skip_all() {
	KG_PLAN=1
	trap 'echo "1..$KG_PLAN"' EXIT
	skip "$1"
	exit 0
}

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }
# skip "name: why" prints "ok - name # SKIP why".
skip() {
	case "$*" in
	*': '*) echo "ok - ${*%%: *} # SKIP ${*#*: }" ;;
	*) echo "ok - $* # SKIP" ;;
	esac
}

# check NAME COMMAND...: ok if the command succeeds.
check() {
	local name=$1; shift
	if "$@"; then ok "$name"; else notok "$name"; fi
}

# expect_fail NAME CODE PATTERN COMMAND...: the command must exit with
# CODE and print a stderr line matching the grep -E PATTERN.  The usage
# text a usage error prints after its message ("usage: ..." onwards) is
# left out of the match: it names every option, so a pattern it holds
# would pass whatever the message said.
expect_fail() {
	local name=$1 code=$2 pat=$3; shift 3
	local err rc
	err=$("$@" 2>&1 >/dev/null)
	rc=$?
	if [ "$rc" -ne "$code" ]; then
		notok "$name (exit $rc, wanted $code; stderr: $err)"
	elif ! sed '/^usage: /,$d' <<<"$err" | grep -Eq -- "$pat"; then
		notok "$name (stderr '$err' does not match '$pat')"
	else
		ok "$name"
	fi
}

# golden NAME CODE STDERR COMMAND...: the command must exit with CODE
# and its whole stderr must be exactly STDERR (a golden output, as zstd
# and git test theirs; give the lines separated by newlines).
golden() {
	local name=$1 code=$2 want=$3; shift 3
	local err rc
	err=$("$@" 2>&1 >/dev/null)
	rc=$?
	if [ "$rc" -ne "$code" ]; then
		notok "$name (exit $rc, wanted $code; stderr: $err)"
	elif [ "$err" != "$want" ]; then
		notok "$name (stderr '$err', wanted '$want')"
	else
		ok "$name"
	fi
}

# The shared real datasets, or empty.
shared_data() {
	if [ -n "${KG_SHARED_DATA:-}" ] && [ -d "$KG_SHARED_DATA/$1" ]; then
		echo "$KG_SHARED_DATA/$1"
	fi
}

# The bundled small datasets (UMLS, Nations, Kinships).
fixture_data() { echo "$KG_TOP/examples/data/$1"; }

# warm_fixture EPOCHS: yesterday's and today's UMLS in the working
# directory for the warm-start tests: all.tsv today's train triples,
# fresh.txt every tenth entity name, dsy the triples touching none of
# them, dst = kg-ingest --extend dsy with all of them; ne and nr dsy's
# entity and relation counts, na dst's; t a short TransE_l2 kg-train
# command line and m its model of dsy after EPOCHS epochs.  Says
# "not ok" and returns 1 when a step fails.
warm_fixture() {
	gzip -dc "$(fixture_data umls)/train.txt.gz" >all.tsv
	cut -f1 all.tsv | sort -u | awk 'NR % 10 == 3' >fresh.txt
	awk 'NR == FNR { f[$1] = 1; next } !($1 in f) && !($3 in f)' \
	    fresh.txt all.tsv >yesterday.tsv
	kg-ingest -q -o dsy --train yesterday.tsv || { notok "kg-ingest"; return 1; }
	kg-ingest -q --extend dsy -o dst --train all.tsv ||
	    { notok "kg-ingest --extend"; return 1; }
	ne=$(wc -l <dsy/entities.tsv); nr=$(wc -l <dsy/relations.tsv)
	na=$(wc -l <dst/entities.tsv)
	t="kg-train -q --model_name TransE_l2 --hidden_dim 16 --num_thread 1"
	t="$t --seed 5 --batch_size 256 --neg_sample_size 32"
	$t --epochs "$1" dsy m || { notok "yesterday's model"; return 1; }
}

# numpy is optional for tests: python3 with numpy or empty.
numpy_python() {
	local py
	for py in /usr/bin/python3 python3; do
		if "$py" -c 'import numpy' 2>/dev/null; then echo "$py"; return; fi
	done
}

# enterprise_fixture NODES [PARTS...]: a generated enterprise graph of
# NODES nodes (seed 1) in ent/data, ingested into ds with its attribute
# features in feat; for each PARTS, METIS parts pPARTS expanded two hops
# into xPARTS.  Non-zero when a stage fails.
enterprise_fixture() {
	local n=$1 p d=ent/data
	shift
	mkdir -p ent &&
	"$KG_BUILD/aux/kg_gen_enterprise" -o $d -n "$n" -s 1 2>/dev/null &&
	kg-ingest -q -o ds --types $d/types.tsv --train $d/train.tsv \
	    --valid $d/valid.tsv --test $d/test.tsv &&
	kg-encode-attrs fit -q -d ds -s $d/schema.json -o am &&
	kg-encode-attrs transform -q -j 1 -d ds -m am -o s0 --shard 0/1 &&
	kg-encode-attrs merge -q -m am -o feat s0 || return 1
	for p in "$@"; do
		kg-partition -q -p "$p" -m metis -s 1 -o "p$p" ds &&
		kg-expand -q -k 2 -s 1 -F feat -p "p$p" -o "x$p" ds || return 1
	done
}
