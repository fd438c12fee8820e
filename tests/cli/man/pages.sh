# Every tool has a man page that mandoc accepts without warnings, and every
# long option its --help prints is documented in that page.
. "$KG_TOP/tests/cli/lib.sh"
# One lint per page, two checks per tool.
pages=("$KG_TOP"/man/man1/*.1 "$KG_TOP"/man/man5/*.5 "$KG_TOP"/man/man7/*.7)
tools=("$KG_BIN"/kg-*)
plan $((${#pages[@]} + 2 * ${#tools[@]}))
have_mandoc=1
command -v mandoc >/dev/null 2>&1 || have_mandoc=0
for page in "${pages[@]}"; do
	name=$(basename "$page")
	if [ $have_mandoc -eq 0 ]; then
		skip "lint $name: mandoc not installed"
	elif out=$(mandoc -Tlint -Wwarning "$page" 2>&1); then
		ok "lint $name"
	else
		notok "lint $name: $out"
	fi
done
for tool in "${tools[@]}"; do
	t=$(basename "$tool")
	page=$KG_TOP/man/man1/$t.1
	help=$("$tool" --help 2>&1)
	rc=$?
	if [ ! -f "$page" ]; then
		notok "$t has a man page"
	elif [ $rc -ne 0 ]; then
		notok "$t --help exits 0 (got $rc)"
	else
		# Options as mdoc writes them: ".Fl -name" or ".Fl n , -name".
		missing=
		for opt in $(grep -oE -- '--[a-zA-Z][a-zA-Z0-9_-]*' <<<"$help" | sort -u); do
			o=${opt#--}
			grep -E -- "Fl " "$page" | grep -qE -- " -$o([^a-zA-Z0-9_-]|$)" || missing="$missing $opt"
		done
		if [ -z "$missing" ]; then
			ok "$t: every --help option is in its man page"
		else
			notok "$t: options in --help but not in man page:$missing"
		fi
	fi
	if "$tool" --version 2>/dev/null | grep -q '[0-9]'; then
		ok "$t --version"
	else
		notok "$t --version"
	fi
done
