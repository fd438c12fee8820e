# Round trip: UMLS written as N-Triples by tests/tools/tsv_to_ntriples.py
# and read back gives the dataset of its TSV: the same IDs (triples
# arrays byte for byte), names (mapped back from the IRIs), splits and
# counts, from split files and with --split.
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-ingest/helpers.bash"
plan 6

u=$(fixture_data umls)
conv() { python3 "$KG_TOP/tests/tools/tsv_to_ntriples.py" "$@"; }
for s in train valid test; do
	conv "$u/$s.txt.gz" | gzip >"$s.nt.gz"
done
kg-ingest -q -o tsv --train "$u/train.txt.gz" --valid "$u/valid.txt.gz" \
    --test "$u/test.txt.gz"
kg-ingest -q -o nt --train train.nt.gz --valid valid.nt.gz --test test.nt.gz
same "split files: train array byte for byte" tsv/train.npy nt/train.npy
check "split files: valid and test arrays" sh -c \
    'cmp -s tsv/valid.npy nt/valid.npy && cmp -s tsv/test.npy nt/test.npy' 
conv --names e nt/entities.tsv >ent.tsv
conv --names r nt/relations.tsv >rel.tsv
check "split files: the names, IRIs mapped back" \
    sh -c 'cmp -s tsv/entities.tsv ent.tsv && cmp -s tsv/relations.tsv rel.tsv'
check "split files: counts" test \
    "$(fig nt entities) $(fig nt relations) $(fig nt triples.train) $(fig nt triples.valid) $(fig nt triples.test) $(fig nt rdf.literals)" = \
    "$(fig tsv entities) $(fig tsv relations) $(fig tsv triples.train) $(fig tsv triples.valid) $(fig tsv triples.test) 0"

# One input split at random: the same shuffle over the same records.
gzip -dc "$u/train.txt.gz" "$u/valid.txt.gz" "$u/test.txt.gz" >all.tsv
conv all.tsv >all.nt
kg-ingest -q -o tsvs --split 0.8,0.1,0.1 --seed 7 all.tsv
kg-ingest -q -o nts --split 0.8,0.1,0.1 --seed 7 all.nt
check "--split: the same three arrays" sh -c 'cmp -s tsvs/train.npy nts/train.npy &&
    cmp -s tsvs/valid.npy nts/valid.npy && cmp -s tsvs/test.npy nts/test.npy'
conv --names e nts/entities.tsv >ents.tsv
same "--split: the same entity order" tsvs/entities.tsv ents.tsv
