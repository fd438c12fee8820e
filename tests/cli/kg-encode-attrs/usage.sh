#!/usr/bin/env bash
# --help, --version and the man page agree.
source "$KG_TOP/tests/cli/lib.sh"
plan 7
man=$KG_TOP/man/man1/kg-encode-attrs.1
check "--help exits 0" sh -c 'kg-encode-attrs --help >help.txt'
check "fit --help exits 0" sh -c 'kg-encode-attrs fit --help >/dev/null'
check "--help names the three subcommands" sh -c \
    'grep -q "kg-encode-attrs fit" help.txt &&
     grep -q "kg-encode-attrs transform" help.txt &&
     grep -q "kg-encode-attrs merge" help.txt'
check "--version" sh -c 'kg-encode-attrs --version | grep -q "^kg-encode-attrs [0-9]"'
# Every long option of the man page's synopsis is in --help and back.
man_opts=$(grep -o '^\.Op Fl -[a-z-]*\|^\.Fl -[a-z-]*' "$man" |
    sed 's/.*Fl -/--/' | sort -u)
help_opts=$(grep -o -- '--[a-z][a-z-]*' help.txt | sort -u)
missing=$(comm -23 <(echo "$man_opts") <(echo "$help_opts"))
if [ -z "$missing" ]; then ok "synopsis options are in --help"; else
	notok "synopsis options missing from --help: $missing"; fi
if command -v mandoc >/dev/null 2>&1; then
	check "man page is mandoc -Tlint clean" mandoc -Tlint -Wwarning "$man"
else
	skip "man page lint: mandoc not available"
fi
undocumented=
for o in $help_opts; do
	grep -q -- "-${o#--}\b" "$man" || undocumented="$undocumented $o"
done
if [ -z "$undocumented" ]; then ok "every --help option is in the man page"
else notok "not in the man page:$undocumented"; fi
