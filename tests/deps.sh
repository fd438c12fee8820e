#!/bin/sh
# Checks kgpipe's Debian build and test dependencies (or the packages
# given as arguments: tests/fuzz/deps.sh passes clang's).  Missing
# packages are installed with apt-get when we run as root; otherwise we
# stop and print the exact command to run.  On a system without dpkg we
# only warn.
pkgs="gcc make pkg-config libopenmpi-dev openmpi-bin libopenblas-dev
libmetis-dev libcsv-dev libjansson-dev libxxhash-dev zlib1g-dev libserd-dev
python3-numpy mandoc jq gnuplot-nox libutf8proc-dev"
[ $# -gt 0 ] && pkgs="$*"

if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "kgpipe: warning: not a Debian system; make sure these (or" \
	    "their equivalents) are installed: $(echo $pkgs)" >&2
	exit 0
fi
missing=
for p in $pkgs; do
	st=$(dpkg-query -W -f '${db:Status-Status}' "$p" 2>/dev/null)
	[ "$st" = installed ] || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "kgpipe: installing missing packages:$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null 2>&1 || apt-get update
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null ||
	    apt-get install -y --no-install-recommends $missing || {
		echo "kgpipe: apt-get could not install:$missing" >&2
		exit 1
	}
	exit 0
fi
echo "kgpipe: missing packages:$missing" >&2
echo "kgpipe: install them with:" >&2
echo "    sudo apt-get install$missing" >&2
exit 1
