"""Prints what PyTorch prints for the attention tutorials (03, 05-11 and 16): the articles' own code with
their seeds and sizes. The tutorials check their key numbers against these values.

usage (a developer's local check, never part of the build):
    /usr/bin/python3 tools/gen_tutorial_reference.py
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_printoptions(precision=4)

print("== 03 tokens and embeddings (Raschka)")
sentence = 'Life is short, eat dessert first'
dc = {s: i for i, s in enumerate(sorted(sentence.replace(',', '').split()))}
print(dc)
sentence_int = torch.tensor([dc[s] for s in sentence.replace(',', '').split()])
print(sentence_int)
vocab_size = 50_000
torch.manual_seed(123)
embed = torch.nn.Embedding(vocab_size, 3)
embedded_sentence = embed(sentence_int).detach()
print(embedded_sentence)
print(embedded_sentence.shape)

print("== 05 W_query, W_key, W_value")
torch.manual_seed(123)
d = embedded_sentence.shape[1]
d_q, d_k, d_v = 2, 2, 4
W_query = torch.nn.Parameter(torch.rand(d, d_q))
W_key = torch.nn.Parameter(torch.rand(d, d_k))
W_value = torch.nn.Parameter(torch.rand(d, d_v))
print(W_query, W_key, W_value, sep="\n")
x_2 = embedded_sentence[1]
query_2 = x_2 @ W_query
key_2 = x_2 @ W_key
value_2 = x_2 @ W_value
print(query_2.shape, key_2.shape, value_2.shape)
print(query_2, key_2, value_2, sep="\n")
keys = embedded_sentence @ W_key
values = embedded_sentence @ W_value
print("keys.shape:", keys.shape)
print("values.shape:", values.shape)
print(keys, values, sep="\n")

print("== 06 omega, softmax, context")
omega_24 = query_2.dot(keys[4])
print(omega_24)
omega_2 = query_2 @ keys.T
print(omega_2)
print(F.cosine_similarity(query_2.unsqueeze(0), keys, dim=1))  # the dot product's direction part
print(keys.norm(dim=1))
attention_weights_2 = F.softmax(omega_2 / d_k**0.5, dim=0)
print(attention_weights_2)
context_vector_2 = attention_weights_2 @ values
print(context_vector_2.shape)
print(context_vector_2)


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out_kq, d_out_v):
        super().__init__()
        self.d_out_kq = d_out_kq
        self.W_query = nn.Parameter(torch.rand(d_in, d_out_kq))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out_kq))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out_v))

    def forward(self, x):
        keys = x @ self.W_key
        queries = x @ self.W_query
        values = x @ self.W_value
        attn_scores = queries @ keys.T
        attn_weights = torch.softmax(attn_scores / self.d_out_kq**0.5, dim=-1)
        return attn_weights @ values


print("== 07 SelfAttention class")
torch.manual_seed(123)
d_in, d_out_kq, d_out_v = 3, 2, 4
sa = SelfAttention(d_in, d_out_kq, d_out_v)
print(sa(embedded_sentence))


class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out_kq, d_out_v, num_heads):
        super().__init__()
        self.heads = nn.ModuleList([SelfAttention(d_in, d_out_kq, d_out_v) for _ in range(num_heads)])

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)


print("== 08 multi-head")
torch.manual_seed(123)
d_in, d_out_kq, d_out_v = 3, 2, 1
sa = SelfAttention(d_in, d_out_kq, d_out_v)
print(sa(embedded_sentence))
torch.manual_seed(123)
mha = MultiHeadAttentionWrapper(d_in, d_out_kq, d_out_v, num_heads=4)
context_vecs = mha(embedded_sentence)
print(context_vecs)
print("context_vecs.shape:", context_vecs.shape)


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_out_kq, d_out_v):
        super().__init__()
        self.d_out_kq = d_out_kq
        self.W_query = nn.Parameter(torch.rand(d_in, d_out_kq))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out_kq))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out_v))

    def forward(self, x_1, x_2):
        queries_1 = x_1 @ self.W_query
        keys_2 = x_2 @ self.W_key
        values_2 = x_2 @ self.W_value
        attn_scores = queries_1 @ keys_2.T
        attn_weights = torch.softmax(attn_scores / self.d_out_kq**0.5, dim=-1)
        return attn_weights @ values_2


print("== 09 cross-attention")
torch.manual_seed(123)
d_in, d_out_kq, d_out_v = 3, 2, 4
crossattn = CrossAttention(d_in, d_out_kq, d_out_v)
first_input = embedded_sentence
second_input = torch.rand(8, d_in)
print("First input shape:", first_input.shape)
print("Second input shape:", second_input.shape)
context_vectors = crossattn(first_input, second_input)
print(context_vectors)
print("Output shape:", context_vectors.shape)

print("== 10 causal")
torch.manual_seed(123)
d_in, d_out_kq, d_out_v = 3, 2, 4
W_query = nn.Parameter(torch.rand(d_in, d_out_kq))
W_key = nn.Parameter(torch.rand(d_in, d_out_kq))
W_value = nn.Parameter(torch.rand(d_in, d_out_v))
x = embedded_sentence
keys = x @ W_key
queries = x @ W_query
values = x @ W_value
attn_scores = queries @ keys.T
print(attn_scores)
attn_weights = torch.softmax(attn_scores / d_out_kq**0.5, dim=1)
print(attn_weights)
block_size = attn_scores.shape[0]
mask_simple = torch.tril(torch.ones(block_size, block_size))
print(mask_simple)
masked_simple = attn_weights * mask_simple
print(masked_simple)
row_sums = masked_simple.sum(dim=1, keepdim=True)
masked_simple_norm = masked_simple / row_sums
print(masked_simple_norm)
mask = torch.triu(torch.ones(block_size, block_size), diagonal=1)
masked = attn_scores.masked_fill(mask.bool(), -torch.inf)
print(masked)
attn_weights = torch.softmax(masked / d_out_kq**0.5, dim=1)
print(attn_weights)
print(torch.softmax(masked, dim=1)[:2])  # the notebook's cell, without the scaling

print("== 11 Karpathy's head")
torch.manual_seed(1337)
B, T, C = 4, 8, 32
x = torch.randn(B, T, C)
tril = torch.tril(torch.ones(T, T))
wei = torch.zeros((T, T)).masked_fill(tril == 0, float('-inf')).softmax(dim=-1)  # before learning
print(wei)
xbow = wei @ x
print(xbow[0, :3, :4])
head_size = 16
key = nn.Linear(C, head_size, bias=False)
query = nn.Linear(C, head_size, bias=False)
value = nn.Linear(C, head_size, bias=False)
k = key(x)
q = query(x)
wei = q @ k.transpose(-2, -1)
tril = torch.tril(torch.ones(T, T))
wei = wei.masked_fill(tril == 0, float('-inf'))
wei = F.softmax(wei, dim=-1)
v = value(x)
out = wei @ v
print(out.shape)
print(wei[0])
wei_scaled = (q @ k.transpose(-2, -1) * head_size**-0.5).masked_fill(tril == 0, float('-inf')).softmax(-1)
print(wei_scaled[0])
print(out[0, :2, :4])
print((wei_scaled @ v)[0, :2, :4])

print("== 16 RoPE (rotate_half, as Hugging Face's Llama computes it)")
torch.manual_seed(0)
x = torch.randn(4, 8)  # 4 positions, one head of 8
D, base = 8, 10000.0
inv_freq = 1.0 / (base ** (torch.arange(0, D, 2).float() / D))
t = torch.arange(4).float()
freqs = torch.outer(t, inv_freq)
emb = torch.cat((freqs, freqs), dim=-1)
cos, sin = emb.cos(), emb.sin()


def rotate_half(x):
    x1, x2 = x[..., : D // 2], x[..., D // 2 :]
    return torch.cat((-x2, x1), dim=-1)


print(x)
print(x * cos + rotate_half(x) * sin)

print("== 13 gradients through softmax and masking")
torch.manual_seed(123)
sa = SelfAttention(3, 2, 4)
sa(embedded_sentence).sum().backward()
print(sa.W_query.grad, sa.W_key.grad, sa.W_value.grad, sep="\n")
# The causal version: the same weights, -inf above the diagonal before softmax.
torch.manual_seed(123)
sa = SelfAttention(3, 2, 4)
x = embedded_sentence
q, k, v = x @ sa.W_query, x @ sa.W_key, x @ sa.W_value
scores = q @ k.T
scores.retain_grad()
masked = scores.masked_fill(torch.triu(torch.ones(6, 6), diagonal=1).bool(), -torch.inf)
w = torch.softmax(masked / 2**0.5, dim=-1)
(w @ v).sum().backward()
print(sa.W_query.grad, sa.W_key.grad, sa.W_value.grad, sep="\n")
print(scores.grad)
