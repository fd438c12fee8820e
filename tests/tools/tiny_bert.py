#!/usr/bin/env python3
"""A tiny random BERT sentence-transformers directory, and a reference
tokenizer and forward pass for it, written with numpy and the standard
library only (the tests of lib/attrs/bert.h).

  tiny_bert.py write DIR [--cased] [--pool mean|cls|max] [--no-normalize]
      a 2-layer BERT of width 32 (4 heads, FFN 64, 32 positions, max_seq_length
      24) with a vocabulary of about 200 pieces (## pieces, accented and CJK
      entries): config.json, model.safetensors (written byte by byte: 8-byte
      header length, JSON header, data), tokenizer.json, modules.json,
      1_Pooling/config.json, sentence_bert_config.json.  --cased: no
      lowercasing, no accent stripping.
  tiny_bert.py texts FILE.json
      the test texts (accents, CJK, punctuation, emoji, control characters,
      empty and blank values, texts past max_seq_length) as a JSON array.
  tiny_bert.py tokens DIR TEXTS.json [MAX_LEN]
      the reference token IDs, one line a text (as bert_tool tokens).
  tiny_bert.py encode DIR TEXTS.json [MAX_LEN]
      the reference vectors, one line a text (float64, padded batch with
      the attention mask, as Hugging Face runs it).
  tiny_bert.py vocab-form DIR OUT
      DIR's model with BertTokenizer's files in place of tokenizer.json:
      vocab.txt (the pieces in ID order) and tokenizer_config.json (DIR's
      own if it has one, else the normalizer's options as do_lower_case,
      strip_accents, tokenize_chinese_chars); the other files of DIR
      linked, not copied.
  tiny_bert.py break DIR KIND OUT
      a copy of DIR with one defect: no-weights, truncated, bad-shape,
      bad-offset, roberta, no-cls.
"""
import json
import math
import os
import shutil
import struct
import sys
import unicodedata

import numpy as np

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = ["the", "of", "and", "in", "is", "hello", "world", "cafe", "café",
         "creme", "crème", "brulee", "run", "un", "tokyo", "über", "uber",
         "naive", "naïve", "angstrom", "istanbul", "physician", "doctor",
         "emoji", "here", "yes", "quoted", "long", "text", "over", "max",
         "σας", "ß", "é", "ü", "ñ", "å", "東", "京", "日", "本", "中", "文",
         "字", "タ", "ワ", "ー", "💡"]
SUFFIXES = ["##s", "##ing", "##ed", "##aff", "##able", "##é", "##è", "##ü",
            "##er", "##ly", "##tion", "##ian"]


def vocabulary():
    v = list(SPECIALS)
    v += [chr(c) for c in range(ord("a"), ord("z") + 1)]
    v += ["##" + chr(c) for c in range(ord("a"), ord("z") + 1)]
    v += [chr(c) for c in range(ord("A"), ord("Z") + 1)]
    v += [str(d) for d in range(10)] + ["##" + str(d) for d in range(10)]
    v += [c for c in "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"]
    v += WORDS + SUFFIXES
    seen, out = set(), []
    for p in v:
        if p not in seen:
            seen.add(p)
            out.append(p)
    return out


CFG = dict(hidden=32, layers=2, heads=4, inter=64, max_pos=32, types=2,
           max_seq=24)


def tensors(n_vocab, rng):
    h, i = CFG["hidden"], CFG["inter"]
    t = {}

    def lin(name, o, k):
        t[name + ".weight"] = rng.normal(0, 1 / math.sqrt(k), (o, k))
        t[name + ".bias"] = rng.normal(0, 0.1, (o,))

    def ln(name):
        t[name + ".weight"] = 1 + rng.normal(0, 0.1, (h,))
        t[name + ".bias"] = rng.normal(0, 0.1, (h,))

    t["embeddings.word_embeddings.weight"] = rng.normal(0, 1, (n_vocab, h))
    t["embeddings.position_embeddings.weight"] = rng.normal(
        0, 0.5, (CFG["max_pos"], h))
    t["embeddings.token_type_embeddings.weight"] = rng.normal(
        0, 0.5, (CFG["types"], h))
    ln("embeddings.LayerNorm")
    for l in range(CFG["layers"]):
        p = "encoder.layer.%d." % l
        for q in ("query", "key", "value"):
            lin(p + "attention.self." + q, h, h)
        lin(p + "attention.output.dense", h, h)
        ln(p + "attention.output.LayerNorm")
        lin(p + "intermediate.dense", i, h)
        lin(p + "output.dense", h, i)
        ln(p + "output.LayerNorm")
    lin("pooler.dense", h, h)
    return {k: v.astype(np.float32) for k, v in t.items()}


def write_safetensors(path, t, extra_i64=None):
    """The safetensors bytes by hand: u64 header length, header, data."""
    header, blobs, off = {}, [], 0
    items = sorted(t.items())
    if extra_i64 is not None:
        items.append(extra_i64)
    for name, a in items:
        b = np.ascontiguousarray(a).tobytes()
        dt = {np.dtype(np.float32): "F32", np.dtype(np.int64): "I64"}[a.dtype]
        header[name] = {"dtype": dt, "shape": list(a.shape),
                        "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    header["__metadata__"] = {"format": "pt"}
    hj = json.dumps(header).encode()
    hj += b" " * ((8 - len(hj) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hj)))
        f.write(hj)
        for b in blobs:
            f.write(b)


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, e in header.items():
        if name == "__metadata__" or e["dtype"] != "F32":
            continue
        b, end = e["data_offsets"]
        out[name] = np.frombuffer(raw[8 + n + b:8 + n + end],
                                  dtype="<f4").reshape(e["shape"])
    return out


def write(d, cased=False, pool="mean", normalize=True):
    os.makedirs(os.path.join(d, "1_Pooling"), exist_ok=True)
    vocab = vocabulary()
    rng = np.random.default_rng(37)
    t = tensors(len(vocab), rng)
    write_safetensors(os.path.join(d, "model.safetensors"), t,
                      ("embeddings.position_ids",
                       np.arange(CFG["max_pos"], dtype=np.int64)[None, :]))
    config = {"architectures": ["BertModel"], "model_type": "bert",
              "hidden_act": "gelu", "hidden_size": CFG["hidden"],
              "num_hidden_layers": CFG["layers"],
              "num_attention_heads": CFG["heads"],
              "intermediate_size": CFG["inter"],
              "max_position_embeddings": CFG["max_pos"],
              "type_vocab_size": CFG["types"], "vocab_size": len(vocab),
              "layer_norm_eps": 1e-12, "position_embedding_type": "absolute"}
    json.dump(config, open(os.path.join(d, "config.json"), "w"), indent=1)
    tok = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": i, "content": s, "special": True}
                         for i, s in enumerate(SPECIALS)],
        "normalizer": {"type": "BertNormalizer", "clean_text": True,
                       "handle_chinese_chars": True,
                       "strip_accents": False if cased else None,
                       "lowercase": not cased},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {"type": "TemplateProcessing", "single": [
            {"SpecialToken": {"id": "[CLS]", "type_id": 0}},
            {"Sequence": {"id": "A", "type_id": 0}},
            {"SpecialToken": {"id": "[SEP]", "type_id": 0}}]},
        "model": {"type": "WordPiece", "unk_token": "[UNK]",
                  "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100,
                  "vocab": {p: i for i, p in enumerate(vocab)}}}
    json.dump(tok, open(os.path.join(d, "tokenizer.json"), "w"),
              ensure_ascii=False, indent=1)
    mods = [{"idx": 0, "name": "0", "path": "",
             "type": "sentence_transformers.models.Transformer"},
            {"idx": 1, "name": "1", "path": "1_Pooling",
             "type": "sentence_transformers.models.Pooling"}]
    if normalize:
        mods.append({"idx": 2, "name": "2", "path": "2_Normalize",
                     "type": "sentence_transformers.models.Normalize"})
    json.dump(mods, open(os.path.join(d, "modules.json"), "w"), indent=1)
    json.dump({"word_embedding_dimension": CFG["hidden"],
               "pooling_mode_cls_token": pool == "cls",
               "pooling_mode_mean_tokens": pool == "mean",
               "pooling_mode_max_tokens": pool == "max",
               "pooling_mode_mean_sqrt_len_tokens": False},
              open(os.path.join(d, "1_Pooling", "config.json"), "w"))
    json.dump({"max_seq_length": CFG["max_seq"], "do_lower_case": False},
              open(os.path.join(d, "sentence_bert_config.json"), "w"))


TEXTS = [
    "Hello, world!",
    "Café crème brûlée",
    "CAFÉ Crème",
    "Ångström über naïve",
    "cafe\u0301 (a decomposed accent)",
    "東京タワー is in 日本",
    "中文字abc東",
    "emoji 💡 here 👍🏽 and 😀",
    "",
    "   \t  ",
    "\u3000\u00a0\u2003",
    "unaffable running physician",
    "doctors: the world's (quoted) \"text\"; yes?!",
    "a\u0000b\u200bc\u0007d\ufffde",
    "line\nbreak\rand\ttab",
    "İstanbul ΣΑΣ straße",
    "x" * 101 + " a",
    "Ω unknown ¿qué? ¡sí!",
    "$5 + 3 = 8 <b> ^_^ |~`",
    "the long text over max, " * 6,
    "physician doctor physician doctor physician doctor physician "
    "doctor physician doctor physician doctor",
    "runs ran running runner",
    "\u201cdoctor\u201d \u00abphysician\u00bb \u2018run\u2019 \u2014 \u3002",
]


def is_ws(c):
    return c in "\t\n\r" or ord(c) in (
        0x9, 0xa, 0xb, 0xc, 0xd, 0x20, 0x85, 0xa0, 0x1680, 0x2028, 0x2029,
        0x202f, 0x205f, 0x3000) or 0x2000 <= ord(c) <= 0x200a


def is_control(c):
    if c in "\t\n\r":
        return False
    return unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co", "Cn")


def is_cjk(c):
    o = ord(c)
    return any(a <= o <= b for a, b in (
        (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF),
        (0x2A700, 0x2B73F), (0x2B740, 0x2B81F), (0x2B920, 0x2CEAF),
        (0xF900, 0xFAFF), (0x2F800, 0x2FA1F)))


def is_punct(c):
    o = ord(c)
    if (33 <= o <= 47) or (58 <= o <= 64) or (91 <= o <= 96) or \
            (123 <= o <= 126):
        return True
    return unicodedata.category(c).startswith("P")


def tokenize(tok, text, max_len):
    n = tok["normalizer"]
    s = text
    if n["clean_text"]:
        s = "".join(" " if is_ws(c) else c for c in s
                    if not (c == "\0" or c == "\ufffd" or is_control(c)))
    if n["handle_chinese_chars"]:
        s = "".join(" %s " % c if is_cjk(c) else c for c in s)
    strip = n["strip_accents"]
    if strip is None:
        strip = n["lowercase"]
    if strip:
        s = "".join(c for c in unicodedata.normalize("NFD", s)
                    if unicodedata.category(c) != "Mn")
    if n["lowercase"]:
        s = "".join(c.lower() for c in s)
    words, cur = [], ""
    for c in s:
        if is_ws(c):
            if cur:
                words.append(cur)
            cur = ""
        elif is_punct(c):
            if cur:
                words.append(cur)
            words.append(c)
            cur = ""
        else:
            cur += c
    if cur:
        words.append(cur)
    vocab, m = tok["model"]["vocab"], tok["model"]
    unk = vocab[m["unk_token"]]
    ids = []
    for w in words:
        if len(w) > m["max_input_chars_per_word"]:
            ids.append(unk)
            continue
        start, pieces, bad = 0, [], False
        while start < len(w):
            end, cur_id = len(w), None
            while start < end:
                sub = w[start:end]
                if start > 0:
                    sub = m["continuing_subword_prefix"] + sub
                if sub in vocab:
                    cur_id = vocab[sub]
                    break
                end -= 1
            if cur_id is None:
                bad = True
                break
            pieces.append(cur_id)
            start = end
        ids += [unk] if bad else pieces
    return [vocab["[CLS]"]] + ids[:max_len - 2] + [vocab["[SEP]"]]


def erf(x):
    return np.vectorize(math.erf)(x)


def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def forward(d, batch):
    cfg = json.load(open(os.path.join(d, "config.json")))
    W = {k: v.astype(np.float64)
         for k, v in read_safetensors(os.path.join(d, "model.safetensors"))
         .items()}
    pool = json.load(open(os.path.join(d, "1_Pooling", "config.json")))
    mods = json.load(open(os.path.join(d, "modules.json")))
    normalize = any(m["type"].endswith("Normalize") for m in mods)
    B, T = len(batch), max(len(x) for x in batch)
    H, nh = cfg["hidden_size"], cfg["num_attention_heads"]
    dh, eps = H // nh, cfg["layer_norm_eps"]
    ids = np.zeros((B, T), dtype=np.int64)
    mask = np.zeros((B, T))
    for i, x in enumerate(batch):
        ids[i, :len(x)] = x
        mask[i, :len(x)] = 1
    x = W["embeddings.word_embeddings.weight"][ids] + \
        W["embeddings.position_embeddings.weight"][:T][None] + \
        W["embeddings.token_type_embeddings.weight"][0]
    x = layer_norm(x, W["embeddings.LayerNorm.weight"],
                   W["embeddings.LayerNorm.bias"], eps)
    neg = (1 - mask)[:, None, None, :] * np.finfo(np.float64).min

    def lin(p, v):
        return v @ W[p + ".weight"].T + W[p + ".bias"]

    for l in range(cfg["num_hidden_layers"]):
        p = "encoder.layer.%d." % l
        q, k, v = (lin(p + "attention.self." + n, x)
                   .reshape(B, T, nh, dh).transpose(0, 2, 1, 3)
                   for n in ("query", "key", "value"))
        s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(dh) + neg
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        ctx = (s @ v).transpose(0, 2, 1, 3).reshape(B, T, H)
        x = layer_norm(lin(p + "attention.output.dense", ctx) + x,
                       W[p + "attention.output.LayerNorm.weight"],
                       W[p + "attention.output.LayerNorm.bias"], eps)
        hmid = lin(p + "intermediate.dense", x)
        hmid = 0.5 * hmid * (1 + erf(hmid / math.sqrt(2)))
        x = layer_norm(lin(p + "output.dense", hmid) + x,
                       W[p + "output.LayerNorm.weight"],
                       W[p + "output.LayerNorm.bias"], eps)
    if pool["pooling_mode_cls_token"]:
        out = x[:, 0]
    elif pool["pooling_mode_max_tokens"]:
        out = np.where(mask[:, :, None] > 0, x, -1e9).max(1)
    else:
        out = (x * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
    if normalize:
        out = out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True),
                               1e-12)
    return out


def max_len_of(d, argv):
    if argv:
        return int(argv[0])
    return json.load(open(os.path.join(d, "sentence_bert_config.json"))
                     )["max_seq_length"]


def break_copy(d, kind, out):
    shutil.copytree(d, out)
    st = os.path.join(out, "model.safetensors")
    if kind == "no-weights":
        os.remove(st)
    elif kind == "truncated":
        size = os.path.getsize(st)
        with open(st, "r+b") as f:
            f.truncate(size - 100)
    elif kind in ("bad-shape", "bad-offset"):
        raw = open(st, "rb").read()
        n = struct.unpack("<Q", raw[:8])[0]
        h = json.loads(raw[8:8 + n])
        e = h["encoder.layer.1.attention.self.key.weight"]
        if kind == "bad-shape":
            e["shape"] = [e["shape"][0], e["shape"][1] + 1]
        else:
            e["data_offsets"][1] += 10 ** 7
        hj = json.dumps(h).encode()
        hj += b" " * ((8 - len(hj) % 8) % 8)
        with open(st, "wb") as f:
            f.write(struct.pack("<Q", len(hj)) + hj + raw[8 + n:])
    elif kind == "roberta":
        p = os.path.join(out, "config.json")
        c = json.load(open(p))
        c["model_type"] = "roberta"
        json.dump(c, open(p, "w"))
    elif kind == "no-cls":
        p = os.path.join(out, "tokenizer.json")
        t = json.load(open(p))
        del t["model"]["vocab"]["[CLS]"]
        json.dump(t, open(p, "w"), ensure_ascii=False)
    else:
        sys.exit("tiny_bert.py: unknown defect " + kind)


def vocab_form(d, out):
    os.makedirs(out)
    for name in os.listdir(d):
        if name not in ("tokenizer.json", "tokenizer_config.json",
                        "vocab.txt"):
            os.symlink(os.path.abspath(os.path.join(d, name)),
                       os.path.join(out, name))
    tok = json.load(open(os.path.join(d, "tokenizer.json"), encoding="utf-8"))
    vocab = tok["model"]["vocab"]
    pieces = sorted(vocab, key=lambda p: vocab[p])
    assert [vocab[p] for p in pieces] == list(range(len(pieces)))
    with open(os.path.join(out, "vocab.txt"), "w", encoding="utf-8",
              newline="\n") as f:
        f.write("".join(p + "\n" for p in pieces))
    if os.path.exists(os.path.join(d, "tokenizer_config.json")):
        shutil.copy(os.path.join(d, "tokenizer_config.json"), out)
        return
    n = tok["normalizer"]
    cfg = {"do_lower_case": n["lowercase"], "strip_accents": n["strip_accents"],
           "tokenize_chinese_chars": n["handle_chinese_chars"],
           "unk_token": tok["model"]["unk_token"], "cls_token": "[CLS]",
           "sep_token": "[SEP]", "pad_token": "[PAD]",
           "mask_token": "[MASK]", "tokenizer_class": "BertTokenizer"}
    json.dump(cfg, open(os.path.join(out, "tokenizer_config.json"), "w"))


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    cmd = argv[0]
    if cmd == "write":
        rest = argv[2:]
        pool = rest[rest.index("--pool") + 1] if "--pool" in rest else "mean"
        write(argv[1], "--cased" in rest, pool, "--no-normalize" not in rest)
    elif cmd == "texts":
        json.dump(TEXTS, open(argv[1], "w"), ensure_ascii=False)
    elif cmd in ("tokens", "encode"):
        d = argv[1]
        texts = json.load(open(argv[2], encoding="utf-8"))
        tok = json.load(open(os.path.join(d, "tokenizer.json"),
                             encoding="utf-8"))
        ml = max_len_of(d, argv[3:])
        ids = [tokenize(tok, s, ml) for s in texts]
        if cmd == "tokens":
            for x in ids:
                print(" ".join(map(str, x)))
        else:
            for row in forward(d, ids):
                print(" ".join("%.17g" % v for v in row))
    elif cmd == "break":
        break_copy(argv[1], argv[2], argv[3])
    elif cmd == "vocab-form":
        vocab_form(argv[1], argv[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
