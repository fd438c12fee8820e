# kg-predict reads names exactly as kg-ingest stored them (issue 32,
# item 3): a query line that starts with '#' but has a query's fields
# asks about the entity "#tag"; a shorter '#' line is a comment.
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-eval/lib.inc"
plan 4

printf '#tag\tmentions\tuser1\nuser1\tmentions\tuser2\nuser2\tlikes\t#tag\n' >a.tsv
kg-ingest -q -o d a.tsv || { notok "ingest"; exit 0; }
"$MKMODEL" d m DistMult 4 || { notok "make model"; exit 0; }

printf '# my queries\n#tag\tmentions\t?\n?\tlikes\t#tag\n' >q.tsv
kg-predict d m q.tsv >out 2>err
check "queries naming '#tag': exit 0, nothing on stderr" test $? -eq 0 -a ! -s err
check "three tails of (#tag, mentions, ?)" \
    test "$(awk -F'\t' '$1 == "#tag" && $2 == "mentions"' out | wc -l)" -eq 3
check "three heads of (?, likes, #tag)" \
    test "$(awk -F'\t' '$2 == "likes" && $3 == "#tag"' out | wc -l)" -eq 3
printf '#tag\n' >near.txt
kg-predict --nearest -k 1 d m near.txt >nout 2>err
check "--nearest '#tag': one neighbour" \
    test $? -eq 0 -a "$(cut -f1 nout | tail -n +2)" = "#tag"
