#!/usr/bin/env python3
"""Writes the seed corpus of tests/fuzz (run once; the outputs are committed).

Seeds are small, valid inputs that show the fuzzer what each format looks like; libFuzzer
mutates them into the invalid ones. Usage: python3 tools/gen_fuzz_corpus.py (from the root).
"""
import io
import json
import os
import struct

import numpy as np

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
