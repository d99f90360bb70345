"""GPT-2's map from each byte to a printable character (OpenAI's encoder.py, bytes_to_unicode),
shared by the tools that write byte-level BPE files (gen_bpe_reference.py, gen_fuzz_corpus.py)."""


def bytes_to_unicode():
    """{byte: character}: the printable bytes map to themselves, the rest to 256 + n in order."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1)) + \
        list(range(ord("\xae"), ord("\xff") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, [chr(c) for c in cs]))
