#!/usr/bin/env python3
"""Writes the seed corpus of tests/fuzz (run once; the outputs are committed).

Seeds are small, valid inputs that show the fuzzer what each format looks like; libFuzzer
mutates them into the invalid ones. Usage, from the root, with NumPy (Debian: python3-numpy) and
lesson 16's release build (the checkpoint seeds are its files):
    cmake --build --preset release && python3 tools/gen_fuzz_corpus.py
"""
import io
import json
import os
import struct

import numpy as np

from gpt2_bytes import bytes_to_unicode

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fuzz", "corpus")


def write(target, name, data):
    os.makedirs(os.path.join(ROOT, target), exist_ok=True)
    with open(os.path.join(ROOT, target, name), "wb") as f:
        f.write(data)


# ---- tensor_ops: bytes as fuzz_tensor_ops.cpp reads them ----------------------------------
# start: rank in [0, 4], sizes in [0, 5]; each op: kind in [0, 15], n ints in [0, 5], each int
# in [-3, 6] (byte = value + 3), a second operand's rank in [0, 4] and sizes in [0, 5].
def op(kind, ints=(), other=()):
    return bytes([kind, len(ints)] + [v + 3 for v in ints] + [len(other)] + list(other))


def start(*shape):
    return bytes([len(shape)] + list(shape))


write("tensor_ops", "view_transpose", start(2, 3) + op(0, [3, 2]) + op(3, [0, 1]) + op(1, [-1]))
write("tensor_ops", "expand_add", start(3, 1) + op(7, [2, 3, 4]) + op(13, [], [4]) + op(14, [0, 1]))
write("tensor_ops", "narrow_select", start(4, 5) + op(8, [1, 1, 3]) + op(10, [0, -1]) + op(9, [0, 0, 6, 2]))
write("tensor_ops", "cat_permute", start(2, 3, 4) + op(11, [1]) + op(4, [2, 0, 1]) + op(2, [0, 1]))
write("tensor_ops", "squeeze_matmul", start(1, 3, 4) + op(6, [0]) + op(15, [], [4, 2]) + op(5, [-1]))
write("tensor_ops", "empty", start(0, 3) + op(12, [0], [2, 3]) + op(0, [-1]) + op(6))

# ---- safetensors --------------------------------------------------------------------------
def safetensors(tensors, metadata=None):
    header, data = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, arr in tensors:
        raw = arr.tobytes()
        dtype = {"float32": "F32", "int64": "I64"}[str(arr.dtype)]
        header[name] = {"dtype": dtype, "shape": list(arr.shape),
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + data


f32 = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
write("safetensors", "one_f32", safetensors([("weight", f32)]))
write("safetensors", "two_with_metadata", safetensors(
    [("bias", np.array([1.5, -2], dtype=np.float32)), ("ids", np.array([[3, 1]], dtype=np.int64))],
    {"format": "qkv-checkpoint-1", "step": "7"}))
write("safetensors", "scalar_and_empty", safetensors(
    [("s", np.array(3.25, dtype=np.float32)), ("e", np.zeros((0, 4), dtype=np.float32))]))
write("safetensors", "nothing", safetensors([]))

# ---- npy ------------------------------------------------------------------------------------
def npy(arr):
    b = io.BytesIO()
    np.save(b, arr)
    return b.getvalue()


write("npy", "f32_2x3", npy(f32))
write("npy", "i64_vector", npy(np.array([1, -2, 3], dtype=np.int64)))
write("npy", "f32_scalar", npy(np.array(0.5, dtype=np.float32)))
write("npy", "f32_empty", npy(np.zeros((2, 0), dtype=np.float32)))

# ---- text: a block-size byte, a batch-size byte, then UTF-8 text ---------------------------
write("text", "dessert", bytes([3, 1]) + b"Life is short, eat dessert first. " * 3)
write("text", "multibyte", bytes([5, 2]) + "naïve café — ∑ 😀 日本語の文章です。".encode() * 2)
write("text", "short", bytes([15, 3]) + b"abc")


# ---- bpe: u16 length of vocab.json, u16 length of merges.txt, the two files, the prompt -----
def bpe_files(merges):
    """vocab.json (the 256 byte symbols, then each merge's join) and merges.txt."""
    byte_symbols = list(bytes_to_unicode().values())
    vocab = {s: i for i, s in enumerate(byte_symbols)}
    for a, b in merges:
        vocab[a + b] = len(vocab)
    merges_txt = "#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges)
    return json.dumps(vocab, ensure_ascii=False).encode(), merges_txt.encode()


def bpe(merges, prompt):
    v, m = bpe_files(merges)
    return struct.pack("<HH", len(v), len(m)) + v + m + prompt.encode()


write("bpe", "hello_world", bpe([("h", "e"), ("l", "l"), ("he", "ll"), ("Ġ", "w"), ("o", "r")],
                                "hello world, hello worlds"))
write("bpe", "no_merges", bpe([], "Life is short."))
write("bpe", "multibyte", bpe([("c", "a"), ("ca", "f")], "café naïve 😀"))


# ---- gpt2: u16 length of config.json, config.json, then model.safetensors -----------------
def gpt2_weights(vocab, C, layers, positions, prefix=""):
    rng = np.random.default_rng(0)

    def w(*shape):
        return (0.3 * rng.standard_normal(shape)).astype(np.float32)

    out = [(prefix + "wte.weight", w(vocab, C)), (prefix + "wpe.weight", w(positions, C))]
    for i in range(layers):
        h = f"{prefix}h.{i}."
        out += [(h + "ln_1.weight", w(C)), (h + "ln_1.bias", w(C)),
                (h + "attn.c_attn.weight", w(C, 3 * C)), (h + "attn.c_attn.bias", w(3 * C)),
                (h + "attn.c_proj.weight", w(C, C)), (h + "attn.c_proj.bias", w(C)),
                (h + "ln_2.weight", w(C)), (h + "ln_2.bias", w(C)),
                (h + "mlp.c_fc.weight", w(C, 4 * C)), (h + "mlp.c_fc.bias", w(4 * C)),
                (h + "mlp.c_proj.weight", w(4 * C, C)), (h + "mlp.c_proj.bias", w(C))]
    return out + [(prefix + "ln_f.weight", w(C)), (prefix + "ln_f.bias", w(C))]


def gpt2(config, weights):
    c = json.dumps(config).encode()
    return struct.pack("<H", len(c)) + c + safetensors(weights)


write("gpt2", "one_layer", gpt2(
    {"vocab_size": 5, "n_embd": 4, "n_head": 2, "n_layer": 1, "n_positions": 3},
    gpt2_weights(5, 4, 1, 3)))
write("gpt2", "two_layers_hf_names", gpt2(
    {"vocab_size": 3, "n_embd": 2, "n_head": 1, "n_layer": 2, "n_positions": 2,
     "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new"},
    gpt2_weights(3, 2, 2, 2, prefix="transformer.")))


# ---- checkpoint: lesson 16's checkpoints of its smallest model ------------------------------
# Written by the lesson itself (its release build must exist): a run of 2 steps, and one of 3
# with a warmup, each with its history, config, vocabulary and settings.
LESSON16 = os.path.join(ROOT, "..", "..", "..", "build", "release", "tutorials", "16_train_tiny_gpt")
if os.path.exists(LESSON16):
    import subprocess
    import tempfile
    for name, extra in [("two_steps", ["--steps", "2"]),
                        ("three_steps_warmup", ["--steps", "3", "--warmup_steps", "2"])]:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "run.safetensors")
            subprocess.run([LESSON16, "--n_embd", "4", "--n_head", "1", "--n_layer", "1",
                            "--block", "4", "--batch", "2", "--eval_every", "1",
                            "--eval_batches", "1", "--no_compare", "--sample", "0",
                            "--svg_dir", tmp, "--save", path] + extra,
                           check=True, stdout=subprocess.DEVNULL)
            with open(path, "rb") as f:
                write("checkpoint", name, f.read())
else:
    print("no", LESSON16, "(cmake --build --preset release): checkpoint seeds not written")
