#!/usr/bin/env python3
"""sentence-transformers' side of bench/text_encoder.sh.

  text_encoder_st.py MODEL_DIR TEXTS.json BATCH THREADS OUT.npy

Loads the model on the CPU with torch's THREADS threads, encodes the first
batch once (warm-up, untimed), then times model.encode of every text at
batch size BATCH (sentence-transformers sorts by length, as kgpipe does)
and prints one JSON line {"seconds": S, "versions": {...}}; the vectors go
to OUT.npy.
"""
import json
import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
import numpy as np  # noqa: E402
import sentence_transformers  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from sentence_transformers import SentenceTransformer  # noqa: E402


def main():
    model_dir, texts_path, batch, threads, out = sys.argv[1:6]
    torch.set_num_threads(int(threads))
    texts = json.load(open(texts_path, encoding="utf-8"))
    m = SentenceTransformer(model_dir, device="cpu")
    m.encode(texts[:int(batch)], batch_size=int(batch))
    t0 = time.perf_counter()
    v = m.encode(texts, batch_size=int(batch), convert_to_numpy=True)
    s = time.perf_counter() - t0
    np.save(out, v.astype(np.float32))
    print(json.dumps({"seconds": s, "versions": {
        "torch": torch.__version__,
        "sentence_transformers": sentence_transformers.__version__,
        "transformers": transformers.__version__}}))


if __name__ == "__main__":
    main()
