# Comments state contracts (STYLE.md): no comment in lib/ or cmd/ cites an
# issue ("issue 31", "issue #5"), and every file path under lib/, cmd/,
# tests/ or bench/ that a comment names exists (also as an #include
# spells it: "compute/kernels.h").  The tree is checked by
# tests/tools/comments.py, each fault printed as a TAP comment line
# ("# FILE:LINE: ..."); small planted trees show that each kind of fault
# fails it with a line naming the fault, and that literals, globs that
# match, brace lists and placeholders pass.
source "$KG_TOP/tests/cli/lib.sh"
plan 10

if ! command -v python3 >/dev/null; then
	skip_all "comments: python3 is not installed"
fi
tool=$KG_TOP/tests/tools/comments.py

out=$(python3 "$tool" "$KG_TOP" 2>&1)
rc=$?
# tree KIND NAME: ok when the tree's run printed no line of KIND; else
# each such line as a TAP comment, then not ok.
tree() {
	local hits
	hits=$(grep -F -- ": $1: " <<<"$out")
	if [ -n "$hits" ]; then
		sed 's/^/# /' <<<"$hits"
		notok "$2 ($(grep -c . <<<"$hits") found)"
	elif [ "$rc" -gt 1 ]; then
		notok "$2 (comments.py exit $rc: $out)"
	else
		ok "$2"
	fi
}
tree "cites an issue" "comments: no comment in lib/ or cmd/ cites an issue"
tree "names a missing file" \
    "comments: every file a comment in lib/ or cmd/ names exists"

# A planted tree: lib/x/a.c gets the comment text $2 (a C comment), next
# to the files lib/x/b.h and tests/t.sh, which exist.
setup() {
	rm -rf copy && mkdir -p copy/lib/x copy/cmd copy/tests copy/bench
	: >copy/lib/x/b.h
	: >copy/tests/t.sh
	printf '%s\n' "int x;" "$1" "int y;" >copy/lib/x/a.c
}
# planted NAME PATTERN COMMENT: the tree with COMMENT fails the check
# with a line matching the grep -E PATTERN.
planted() {
	local name=$1 pat=$2 got prc
	setup "$3"
	got=$(python3 "$tool" copy 2>&1)
	prc=$?
	if [ "$prc" -ne 1 ]; then
		notok "comments $name (exit $prc; output: $got)"
	elif ! grep -Eq -- "$pat" <<<"$got"; then
		notok "comments $name (output '$got' does not match '$pat')"
	else
		ok "comments $name"
	fi
}
planted "refuses an issue number" \
    "^lib/x/a.c:2: cites an issue: 'issue 31'$" \
    "/* The step of issue 31, item 3. */"
planted "refuses an issue number with #" \
    "^lib/x/a.c:2: cites an issue: 'Issue #5'$" \
    "// Issue #5 asked for this."
planted "refuses an issue number across two lines" \
    "^lib/x/a.c:3: cites an issue: 'issue 7'$" \
    "$(printf '/*\n * As asked in issue\n * 7. */')"
planted "refuses a path that does not exist" \
    "^lib/x/a.c:2: names a missing file: 'lib/x/gone.c'$" \
    "/* As lib/x/gone.c does, and lib/x/b.h. */"
planted "refuses an include-style name that does not exist" \
    "^lib/x/a.c:2: names a missing file: 'x/gone.h'$" \
    "/* As x/gone.h says. */"
planted "refuses a glob that matches nothing" \
    "^lib/x/a.c:2: names a missing file: 'lib/x/b_\*.h'$" \
    "/* The headers lib/x/b_*.h. */"
planted "refuses a brace list with a missing member" \
    "^lib/x/a.c:2: names a missing file: 'lib/x/b.\{h,c\}'$" \
    "/* lib/x/b.{h,c}: the module. */"

setup "$(printf '%s\n' \
    '/* lib/x/b.h, lib/x/*.h, lib/x/{a.c,b.h}, tests/t.sh, lib/x/ and' \
    ' * tests/cli/<tool>/<case>.sh, x/b.h name what is there. */' \
    'static const char *s = "/* issue 31, lib/x/gone.c */";' \
    "static const char c = '\"', *t = \"/* issue 4 */\"; /* lib/x/b.h */")"
check "comments: literals, globs, brace lists and placeholders pass" \
    python3 "$tool" copy
