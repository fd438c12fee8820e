#!/usr/bin/env bash
# kg-export's three formats read back: TSV with numpy, word2vec text with
# a small reader written here (gensim's rules: "count dim", then "name v1
# ... vd" split on single spaces), the projector pair with numpy; names
# with spaces follow the stated policy.
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-eval/lib.inc"
plan 23

py=$(numpy_python)
[ -n "$py" ] || skip_all "kg-export: no python3 with numpy"
make_umls umls || { notok "ingest umls"; exit 0; }
"$MKMODEL" umls m ComplEx 16 || { notok "make model"; exit 0; }
"$MKMODEL" --reciprocal umls rm DistMult 8 || notok "make reciprocal"

kg-export umls m >e.tsv
check "tsv exit 0" test $? -eq 0
kg-export --format word2vec -o e.w2v umls m
check "word2vec exit 0" test $? -eq 0
kg-export --format projector -o proj umls m
check "projector exit 0" test $? -eq 0
kg-export --table relations --format word2vec umls rm >r.w2v
check "relations exit 0" test $? -eq 0

"$py" - <<'PY' || notok "export: the python checks exited with status $?"
import numpy as np

def ok(name, cond):
    print(("ok - " if cond else "not ok - ") + name)

def names(path):
    return [l.rstrip("\n").split("\t", 1)[1] for l in open(path)]

def read_word2vec(path):
    """word2vec text: a header "count dim", then "word v1 ... vd" lines
    whose fields are separated by single spaces (what gensim's
    load_word2vec_format(binary=False) accepts)."""
    with open(path, encoding="utf-8") as f:
        count, dim = (int(x) for x in f.readline().split(" "))
        words, vecs = [], []
        for line in f:
            parts = line.rstrip("\n").split(" ")
            if len(parts) != dim + 1:
                raise ValueError("line has %d fields" % len(parts))
            words.append(parts[0])
            vecs.append([float(x) for x in parts[1:]])
    if len(words) != count:
        raise ValueError("%d words, header says %d" % (len(words), count))
    return words, np.array(vecs, dtype=np.float32)

E = np.load("m/entities.npy")
ent = names("umls/entities.tsv")
rows = [l.rstrip("\n").split("\t") for l in open("e.tsv")]
ok("tsv: names in ID order", [r[0] for r in rows] == ent)
ok("tsv: values read back exactly",
   np.array_equal(np.array([r[1:] for r in rows], dtype=np.float32), E))
w, V = read_word2vec("e.w2v")
ok("word2vec: names", w == ent)
ok("word2vec: values read back exactly", np.array_equal(V, E))
P = np.loadtxt("proj/vectors.tsv", delimiter="\t", dtype=np.float32)
ok("projector: vectors.tsv", np.array_equal(P, E))
ok("projector: metadata.tsv, one name a line, no header",
   [l.rstrip("\n") for l in open("proj/metadata.tsv")] == ent)
R = np.load("rm/relations.npy")
rel = names("umls/relations.tsv")
w, V = read_word2vec("r.w2v")
ok("relations of a reciprocal model: 2n rows, inverses named ^-1",
   w == rel + [r + "^-1" for r in rel] and np.array_equal(V, R))
try:
    import gensim.models
    kv = gensim.models.KeyedVectors.load_word2vec_format("e.w2v", binary=False)
    ok("gensim reads the word2vec file", np.allclose(kv[ent[3]], E[3]))
except ImportError:
    print("ok - gensim reads the word2vec file # SKIP gensim is not installed")
PY
check "projector: manifest" test -f proj/manifest.json

# Names with spaces: '_' in word2vec, kept in TSV; a clash is an error.
printf 'New York\tlies_in\tUnited States\nParis\tlies_in\tFrance\n' >sp.tsv
kg-ingest -q -o sp sp.tsv && "$MKMODEL" sp spm DistMult 4 ||
    { notok "spaces dataset"; exit 0; }
kg-export --format word2vec spm 2>/dev/null
kg-export --format word2vec sp spm | cut -d' ' -f1 >w.txt
check "word2vec: spaces become '_'" test "$(sed -n 2p w.txt),$(sed -n 3p w.txt)" = "New_York,United_States"
kg-export sp spm | cut -f1 >t.txt
check "tsv keeps spaces" test "$(sed -n 1p t.txt)" = "New York"
printf 'New York\tlies_in\tUS\nNew_York\tlies_in\tUS\n' >clash.tsv
kg-ingest -q -o clash clash.tsv && "$MKMODEL" clash clm DistMult 4
golden "word2vec: names that clash once spaces go" 1 \
    "kg-export: entities 2 and 0 are both 'New_York' once spaces become '_' (word2vec separates fields by spaces; --format tsv keeps names as they are)" \
    kg-export --format word2vec -o clash.w2v clash clm
check "no file after the clash" test ! -e clash.w2v

expect_fail "projector needs -o" 2 "^kg-export: --format projector writes a directory: give -o DIR$" \
    kg-export --format projector umls m
expect_fail "bad format" 2 "--format: 'csv' is not tsv, word2vec or projector" \
    kg-export --format csv umls m
expect_fail "bad table" 2 "--table: 'nodes' is not entities or relations" \
    kg-export --table nodes umls m
golden "existing output" 1 "kg-export: output 'e.w2v' exists; use --force to replace it" \
    kg-export --format word2vec -o e.w2v umls m
golden "existing projector directory" 1 "kg-export: output 'proj' exists; use --force to replace it" \
    kg-export --format projector -o proj umls m
expect_fail "model of another dataset" 1 "model has 135 entities" kg-export sp m
