# man/man1/kg-train.1 documents exactly the options of kg-train's option
# table (cmd/cli/train_opts.c, listed by build/aux/train_opts): every
# spelling the table accepts appears in the page as an Fl, every option
# an .It or .Op line of the page names is in the table, and the options
# of the page's GNN section are GNN options, those before it shallow ones.
. "$KG_TOP/tests/cli/lib.sh"
plan 4
list=$KG_BUILD/aux/train_opts
page=$KG_TOP/man/man1/kg-train.1
if [ ! -x "$list" ]; then
	skip_all "kg-train man page against the table: $list not built"
fi
"$list" >table.txt || notok "train_opts lists the table"
python3 - "$page" table.txt <<'PY'
import re, sys

page, table = sys.argv[1], sys.argv[2]
kinds = {}
for ln in open(table):
    name, k = ln.split()
    kinds[name] = set(k.split(","))

def flags(line):
    """The options an mdoc line names with Fl: '.Fl d , -x' -> -d, --x."""
    out, in_fl = [], False
    for tok in line[1:].split():
        if tok == "Fl":
            in_fl = True
        elif not in_fl:
            continue
        elif tok in (",", "|"):
            continue
        elif re.fullmatch(r"[A-Z][a-z][a-z]?", tok):
            in_fl = False
        else:
            tok = tok.rstrip(").,;:")
            if tok:
                out.append("-" + tok)
    return out

documented, items, section = set(), [], None
for line in open(page):
    line = line.rstrip("\n")
    if line.startswith(".Ss ") or line.startswith(".Sh "):
        section = line[4:]
    if not line.startswith(".") or "Fl" not in line[1:].split():
        continue
    names = flags(line)
    documented.update(names)
    if line.startswith(".It ") or line.startswith(".Op "):
        items += [(n, section) for n in names]

def report(ok, name, bad):
    if ok:
        print("ok - " + name)
    else:
        print("not ok - %s: %s" % (name, " ".join(sorted(set(bad)))))

missing = [n for n in kinds if n not in documented]
report(not missing, "every option of the table is in kg-train.1", missing)
extra = [n for n, _ in items if n not in kinds]
report(not extra, "every option kg-train.1 lists is in the table", extra)
gnn = [n for n, s in items if s == "GNN encoders" and n in kinds
       and "gnn" not in kinds[n]]
report(not gnn, "kg-train.1's GNN options are the table's GNN options", gnn)
sh = [n for n, s in items if s in ("Options", "Distributed training",
      "Out-of-core training") and n in kinds and "shallow" not in kinds[n]]
report(not sh, "kg-train.1's shallow options are the table's shallow ones",
       sh)
PY
