"""tiny_gpt_twin.py: lesson 16's tiny GPT written in PyTorch, to run beside the C++ one.

It is the same experiment, line for line:
  - the data: the characters of --data, the vocabulary their sorted set, the first 90% for
    training and the last 10% for validation;
  - the model: token and position embeddings, n_layer pre-LayerNorm blocks (attention with
    separate q, k, v and o Linears, the causal mask unless --no_causal; an MLP of 4 C with
    exact GELU), a final LayerNorm and a bias-free head. Modules are built in the same order and
    under the same names as qkv's (tok, pos, blocks.0.ln1, blocks.0.q, ...), so after the same
    seed both hold the same initial weights, bit for bit;
  - the batches: random windows of --block characters drawn by a torch.Generator seeded with
    --seed (training) and one seeded with 0 (validation), as qkv's generator draws them;
  - the optimizer: AdamW with PyTorch's defaults (betas 0.9, 0.999, eps 1e-8, decay 0.01).

It prints what lesson 16 prints for a training run:
  eval step K: train A val B val_last C
                         every --eval_every steps and at the end: the mean loss over
                         --eval_batches fixed batches of the training text (a generator seeded
                         1) and of the validation text (seeded 0), all positions and the last
  step K loss X          every --log_every steps: that step's batch loss, before the update
  summary params=.. vocab=.. train_loss=.. val_loss=.. val_loss_last=.. tokens_per_s=.. step_ms=..
val_loss is the mean cross-entropy over --eval_batches validation batches at every position;
val_loss_last the same at the last position only (all that generation ever sees).

Side by side (tutorials/README.md, lesson 16, says what agreement to expect):
    ./build/release/tutorials/16_train_tiny_gpt --write_corpus /tmp/corpus.txt
    /usr/bin/python3 tools/tiny_gpt_twin.py --data /tmp/corpus.txt --steps 300
    ./build/release/tutorials/16_train_tiny_gpt --data /tmp/corpus.txt --steps 300 --no_compare --sample 0

PyTorch is a learner's and developer's tool here (Debian: apt-get install python3-torch), never
part of the build or the tests: tools/gen_gpt_reference.py runs this file's model once to write
the values tests/attention/test_gpt.cpp holds qkv to.
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

p = argparse.ArgumentParser(description="lesson 16's tiny GPT in PyTorch")
p.add_argument("--data", required=True,
               help="UTF-8 text; lesson 16's built-in corpus: 16_train_tiny_gpt --write_corpus FILE")
for name, default in dict(n_embd=64, n_head=4, n_layer=2, block=32, batch=16, steps=1500,
                          seed=1337, threads=0, eval_batches=20, eval_every=100,
                          log_every=50).items():
    p.add_argument("--" + name, type=int, default=default)
p.add_argument("--lr", type=float, default=1e-3)
p.add_argument("--no_causal", action="store_true", help="train without the causal mask")
a = p.parse_args()
if a.threads > 0:
    torch.set_num_threads(a.threads)  # 0: PyTorch's own default, as qkv's 0 is every core
torch.manual_seed(a.seed)  # the initial weights come from the default generator

# ---- data: characters -> ids, 90% / 10% --------------------------------------------------------
text = open(a.data, encoding="utf-8").read()
chars = sorted(set(text))  # by code point, as qkv's CharTokenizer sorts them
stoi = {c: i for i, c in enumerate(chars)}
data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
n = int(0.9 * len(data))
train, val = data[:n], data[n:]
V = len(chars)


# ---- the model -----------------------------------------------------------------------------------
class Block(nn.Module):
    """x = x + attn(ln1(x)); x = x + mlp(ln2(x)), with the attention written out."""

    def __init__(self, C, H, causal):
        super().__init__()
        self.H, self.causal = H, causal
        self.ln1 = nn.LayerNorm(C)
        self.q, self.k, self.v, self.o = (nn.Linear(C, C) for _ in range(4))
        self.ln2 = nn.LayerNorm(C)
        self.fc, self.proj = nn.Linear(C, 4 * C), nn.Linear(4 * C, C)

    def attn(self, x):
        B, T, C = x.shape
        H, D = self.H, C // self.H
        # (B, T, C) -> (B, H, T, D): each head attends on its own D columns
        q, k, v = (f(x).view(B, T, H, D).transpose(1, 2) for f in (self.q, self.k, self.v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(D)  # (B, H, T, T)
        if self.causal:  # hide the future: True above the diagonal is what masked_fill fills
            scores = scores.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1),
                                        float("-inf"))
        y = F.softmax(scores, dim=-1) @ v  # (B, H, T, D)
        return self.o(y.transpose(1, 2).reshape(B, T, C))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.proj(F.gelu(self.fc(self.ln2(x))))  # exact (erf) GELU


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(V, a.n_embd)
        self.pos = nn.Embedding(a.block, a.n_embd)
        self.blocks = nn.Sequential(
            *[Block(a.n_embd, a.n_head, not a.no_causal) for _ in range(a.n_layer)])
        self.ln_f = nn.LayerNorm(a.n_embd)
        self.head = nn.Linear(a.n_embd, V, bias=False)

    def forward(self, idx):  # (B, T) ids -> (B, T, V) logits
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1]))
        return self.head(self.ln_f(self.blocks(x)))


def batch(src, g):
    """--batch windows of --block ids and, as targets, the same windows one character later."""
    starts = torch.randint(len(src) - a.block - 1, (a.batch,), generator=g)
    return (torch.stack([src[i:i + a.block] for i in starts]),
            torch.stack([src[i + 1:i + a.block + 1] for i in starts]))


# ---- evaluation: the same batches every time --------------------------------------------------
def evaluate(src, seed):
    """The mean loss of --eval_batches batches from src (a generator seeded seed), over all
    positions and at the last position of each window alone."""
    g_eval = torch.Generator().manual_seed(seed)
    total = last = 0.0
    with torch.no_grad():
        for _ in range(a.eval_batches):
            x, y = batch(src, g_eval)
            logits = m(x)
            total += F.cross_entropy(logits.view(-1, V), y.view(-1)).item()
            last += F.cross_entropy(logits[:, -1, :], y[:, -1]).item()
    return total / a.eval_batches, last / a.eval_batches


def report_eval(step):
    train_loss = evaluate(train, 1)[0]
    val_loss, val_last = evaluate(val, 0)
    print(f"eval step {step}: train {train_loss:.4f} val {val_loss:.4f} val_last {val_last:.4f}",
          flush=True)
    return val_loss, val_last


# ---- training ------------------------------------------------------------------------------------
m = GPT()
opt = torch.optim.AdamW(m.parameters(), lr=a.lr)
g = torch.Generator().manual_seed(a.seed)  # training batches: a generator of their own
t0 = time.perf_counter()
loss = torch.tensor(float("nan"))
for step in range(a.steps):
    if step % a.eval_every == 0:
        report_eval(step)
    x, y = batch(train, g)
    loss = F.cross_entropy(m(x).view(-1, V), y.view(-1))
    if step % a.log_every == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
    opt.zero_grad()
    loss.backward()
    opt.step()
seconds = time.perf_counter() - t0
total, last = report_eval(a.steps)  # the end of the run
steps = max(a.steps, 1)
print(f"summary params={sum(p.numel() for p in m.parameters())} vocab={V} "
      f"train_loss={loss.item():.4f} val_loss={total:.4f} "
      f"val_loss_last={last:.4f} "
      f"tokens_per_s={a.batch * a.block * a.steps / seconds:.0f} step_ms={1000 * seconds / steps:.2f}")
