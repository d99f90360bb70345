// explorer.js: the explorer page's views, drawn from what qkv (the WebAssembly module built from
// tutorials/explorer/explorer.cpp) computes. Plain JavaScript, no library: tables for matrices
// with their numbers, SVG for the curves and the attention maps.
"use strict";

let qkv = null;  // the module, once it has started

// ---- calling qkv ------------------------------------------------------------------------------
// Each export returns JSON; a bad input comes back as {"error": "..."}.
function call(name, types, args) {
  // A C string ends at its first NUL: a text with one would be cut short without a word.
  if (args.some((a) => typeof a === "string" && a.includes("\0")))
    return { error: "the text has a NUL character (U+0000), which ends a text in C++: remove it" };
  return JSON.parse(qkv.ccall(name, "string", types, args));
}
const S = "string", N = "number";
const api = {
  attention: (text, mask, loss) =>
    call("qkv_attention", [S, S, S, N, N, N], [text, mask, loss, 123, 2, 4]),
  heads: (text, heads, kv) => call("qkv_heads", [S, N, N], [text, heads, kv]),
  reset: () => call("qkv_train_reset", [], []),
  step: (run) => call("qkv_train_step", [S], [run]),
  evaluate: (run) => call("qkv_train_evaluate", [S], [run]),
  evaluatePart: (run) => call("qkv_train_evaluate_part", [S], [run]),
  maps: (run) => call("qkv_train_maps", [S], [run]),
  sample: (run, prompt, n) => call("qkv_train_sample", [S, S, N], [run, prompt, n]),
  reference: () => call("qkv_reference", [], []),
  timeSteps: (n) => call("qkv_time_steps", [N], [n]),
};

// qkv writes -inf, inf and nan as strings (JSON has no words for them).
function num(v) {
  if (typeof v === "number") return v;
  return { "-inf": -Infinity, "inf": Infinity, "nan": NaN }[v];
}
// As PyTorch prints a float at 4 decimals.
function fmt(v) {
  v = num(v);
  if (Number.isNaN(v)) return "nan";
  if (!Number.isFinite(v)) return v > 0 ? "inf" : "-inf";
  const s = v.toFixed(4);
  return s === "-0.0000" ? "-0.0000" : s;
}
const el = (id) => document.getElementById(id);
function h(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const c of children) e.append(c);
  return e;
}

// ---- the article's printed digits (000, Raschka) and lesson 13's --------------------------------
// Shown under a matrix, and checked by the self-check, where the settings are the article's.
const ARTICLE = [
  { m: "x", mask: null, by: "the article", rows: [
    "0.3374, -0.1778, -0.3035", "0.1794, 1.8951, 0.4954", "0.2692, -0.0770, -1.0205",
    "-0.2196, -0.3792, 0.7671", "-0.5880, 0.3486, 0.6603", "-1.1925, 0.6984, -1.4097"] },
  { m: "scores", mask: null, by: "the article", rows: [
    "0.0613, -0.3491, 0.1443, -0.0437, -0.1303, 0.1076",
    "-0.6004, 3.4707, -1.5023, 0.4991, 1.2903, -1.3374",
    "0.2432, -1.3934, 0.5869, -0.1851, -0.5191, 0.4730",
    "-0.0794, 0.4487, -0.1807, 0.0518, 0.1677, -0.1197",
    "-0.1510, 0.8626, -0.3597, 0.1112, 0.3216, -0.2787",
    "0.4344, -2.5037, 1.0740, -0.3509, -0.9315, 0.9265"] },
  { m: "masked", mask: "causal", by: "the article", rows: [
    "0.0613, -inf, -inf, -inf, -inf, -inf", "-0.6004, 3.4707, -inf, -inf, -inf, -inf",
    "0.2432, -1.3934, 0.5869, -inf, -inf, -inf", "-0.0794, 0.4487, -0.1807, 0.0518, -inf, -inf",
    "-0.1510, 0.8626, -0.3597, 0.1112, 0.3216, -inf",
    "0.4344, -2.5037, 1.0740, -0.3509, -0.9315, 0.9265"] },
  { m: "weights", mask: "none", by: "the article", rows: [
    "0.1772, 0.1326, 0.1879, 0.1645, 0.1547, 0.1831",
    "0.0386, 0.6870, 0.0204, 0.0840, 0.1470, 0.0229",
    "0.1965, 0.0618, 0.2506, 0.1452, 0.1146, 0.2312",
    "0.1505, 0.2187, 0.1401, 0.1651, 0.1793, 0.1463",
    "0.1347, 0.2758, 0.1162, 0.1621, 0.1881, 0.1231",
    "0.1973, 0.0247, 0.3102, 0.1132, 0.0751, 0.2794"] },
  { m: "weights", mask: "causal", by: "the article", rows: [
    "1.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000",
    "0.0532, 0.9468, 0.0000, 0.0000, 0.0000, 0.0000",
    "0.3862, 0.1214, 0.4924, 0.0000, 0.0000, 0.0000",
    "0.2232, 0.3242, 0.2078, 0.2449, 0.0000, 0.0000",
    "0.1536, 0.3145, 0.1325, 0.1849, 0.2145, 0.0000",
    "0.1973, 0.0247, 0.3102, 0.1132, 0.0751, 0.2794"] },
  // One digit differs: [2][2] lies within 1e-6 of -0.26265, where rounding to 4 decimals turns,
  // and prints as -0.2626 here, -0.2627 in the article (lesson 09 measures it).
  { m: "context", mask: "none", by: "the article", edge: { i: 2, j: 2, at: -0.26265 }, rows: [
    "-0.1564, 0.1028, -0.0763, -0.0764", "0.5313, 1.3607, 0.7891, 1.3110",
    "-0.3542, -0.1234, -0.2627, -0.3706", "0.0071, 0.3345, 0.0969, 0.1998",
    "0.1008, 0.4780, 0.2021, 0.3674", "-0.5296, -0.2799, -0.4107, -0.6006"] },
  { m: "grad.W_query", mask: "none", loss: "sum", by: "lesson 13 (PyTorch)", rows: [
    "-0.6935, -1.5471", "0.9114, 2.5608", "-0.0468, 0.6226"] },
  { m: "grad.W_key", mask: "none", loss: "sum", by: "lesson 13 (PyTorch)", rows: [
    "0.0492, 0.1817", "0.6063, 3.1989", "-0.3101, -1.2208"] },
  { m: "grad.W_value", mask: "none", loss: "sum", by: "lesson 13 (PyTorch)", rows: [
    "-1.0350, -1.0350, -1.0350, -1.0350", "3.0878, 3.0878, 3.0878, 3.0878",
    "-0.8070, -0.8070, -0.8070, -0.8070"] },
  { m: "grad.W_query", mask: "causal", loss: "sum", by: "lesson 13 (PyTorch)", rows: [
    "-0.8583, -2.0862", "0.4539, 1.1404", "-0.0901, 0.5079"] },
  { m: "grad.W_key", mask: "causal", loss: "sum", by: "lesson 13 (PyTorch)", rows: [
    "-0.1036, -0.5905", "0.0187, 1.4992", "-0.4310, -1.2820"] },
  { m: "grad.scores", mask: "causal", loss: "sum", by: "lesson 13 (PyTorch)", rows: [
    "0.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000",
    "-0.2286, 0.2286, 0.0000, 0.0000, 0.0000, 0.0000",
    "0.0651, 0.5711, -0.6362, 0.0000, 0.0000, 0.0000",
    "-0.3506, 0.9614, -0.6298, 0.0189, 0.0000, 0.0000",
    "-0.3081, 0.7958, -0.4593, -0.0662, 0.0377, 0.0000",
    "0.1215, 0.1273, -0.2620, 0.2563, 0.2101, -0.4533"] },
];
const ARTICLE_TEXT = "Life is short, eat dessert first";

// The printed rows that apply to matrix `name` of `data` (the article's sentence and settings).
function articleRows(name, data) {
  if (data.words.join(" ") !== ARTICLE_TEXT.replace(",", "")) return [];
  return ARTICLE.filter((a) => a.m === name && (a.mask === null || a.mask === data.mask) &&
                               (!a.loss || a.loss === data.loss_kind));
}
// A row as the page prints it, in the article's spelling ("0.0532, 0.9468, ...").
const rowText = (row) => row.map((v) => fmt(v).replace(/^(-?)0\.0000$/, "$10.0000")).join(", ");
// Whether row i of M prints as the article's printed row (its one known edge cell: within 1e-6
// of the rounding edge, where either digit is the same number).
function rowMatches(a, M, i) {
  if (!M[i]) return false;
  if (!a.edge || a.edge.i !== i) return rowText(M[i]) === a.rows[i];
  const mine = rowText(M[i]).split(", "), theirs = a.rows[i].split(", ");
  return mine.every((t, j) => j === a.edge.j ? Math.abs(num(M[i][j]) - a.edge.at) < 1e-6 : t === theirs[j]);
}

// ---- matrices ---------------------------------------------------------------------------------
// A table of M's numbers, coloured by value, each cell explaining itself on hover or tap.
// opts: rows / cols (labels), kind ("weights": 0..1; else signed), hidden (a 0/1 matrix),
// explain(i, j) -> text, article (printed rows to mark).
function matrixTable(M, opts) {
  const rows = M.length, cols = M[0].length;
  let peak = 0;
  for (const r of M) for (const v of r) if (Number.isFinite(num(v))) peak = Math.max(peak, Math.abs(num(v)));
  const t = h("table", { class: "m" });
  if (opts.cols) {
    const tr = h("tr", {}, h("th", {}));
    for (const c of opts.cols) tr.append(h("th", {}, c));
    t.append(tr);
  }
  const printed = new Set();
  for (const a of opts.article || []) a.rows.forEach((_, i) => { if (rowMatches(a, M, i)) printed.add(i); });
  for (let i = 0; i < rows; ++i) {
    const tr = h("tr", {}, h("th", {}, opts.rows ? opts.rows[i] : String(i)));
    for (let j = 0; j < cols; ++j) {
      const v = num(M[i][j]);
      const td = h("td", {}, fmt(v));
      if (opts.hidden && opts.hidden[i][j] && !Number.isFinite(v)) td.className = "hidden";
      else if (opts.hidden && opts.hidden[i][j] && v === 0) td.className = opts.gradient ? "zero" : "hidden";
      else td.style.background = colour(v, peak, opts.kind);
      if (printed.has(i)) td.classList.add("article");
      const text = () => (opts.explain ? opts.explain(i, j) : "") + "\n= " + full(v);
      td.addEventListener("mouseenter", () => (el("explain").textContent = text()));
      td.addEventListener("click", () => (el("explain").textContent = text()));
      tr.append(td);
    }
    t.append(tr);
  }
  return t;
}
const full = (v) => (Number.isFinite(v) ? String(+Math.fround(v).toPrecision(9)) : fmt(v));
function colour(v, peak, kind) {
  if (!Number.isFinite(v) || peak === 0) return "";
  const a = kind === "weights" ? v : Math.abs(v) / peak;
  const [r, g, b] = kind === "weights" || v < 0 ? [31, 119, 180] : [214, 39, 40];
  return `rgba(${r},${g},${b},${(0.85 * Math.min(1, a)).toFixed(3)})`;
}

// One step of a view: a title, its formula, the table, and the article's digits if it prints them.
function stepFigure(title, formula, M, opts) {
  const fig = h("figure", {}, h("figcaption", {}, title), h("div", { class: "formula" }, formula));
  fig.append(h("div", { class: "scroll" }, matrixTable(M, opts)));
  for (const a of opts.article || []) {
    const ok = a.rows.every((_, i) => rowMatches(a, M, i));
    const edge = a.edge ? `, but for one: [${a.edge.i}, ${a.edge.j}] is ${a.rows[a.edge.i].split(", ")[a.edge.j]} there, ` +
      `${fmt(M[a.edge.i][a.edge.j])} here, a value within 1e-6 of the rounding edge ${a.edge.at} (lesson 09)` : "";
    fig.append(h("div", { class: "article-line" + (ok ? "" : " off") },
      (ok ? "\u2713 " : "\u2717 ") + a.by + " prints these digits" + (ok ? edge : ", and these differ")));
  }
  return fig;
}

// "a·b + c·d = s" for a dot product, spelt out.
function dot(as, bs) {
  return as.map((a, k) => fmt(a) + "\u00b7" + fmt(bs[k])).join(" + ");
}
const col = (M, j) => M.map((r) => r[j]);

// ---- view 1 and 2: attention, forward and backward ---------------------------------------------
const state = { text: ARTICLE_TEXT, mask: "causal", loss: "sum", data: null };

function readSentenceControls() {
  state.text = el("text").value;
  state.mask = document.querySelector("input[name=mask]:checked").value;
  state.loss = el("loss").value;
}

function updateAttention() {
  readSentenceControls();
  const data = api.attention(state.text, state.mask, state.loss);
  if (data.error) {
    el("sentence-message").textContent = data.error +
      (state.data ? `. Showing the last setting that worked: "${state.data.words.join(" ")}", mask ` +
                    `${state.data.mask}, loss ${state.data.loss_kind}.` : "");
    return false;
  }
  el("sentence-message").textContent = "";
  state.data = data;
  drawAttention(data);
  drawBackward(data);
  return true;
}

const MASK_WORDS = {
  none: "no mask: every word sees every word",
  causal: "causal: masked_fill(triu(ones, 1).bool(), -inf) hides each word's future",
  wrong: "the wrong convention: masked_fill given the \"may see\" mask (tril), so each word sees " +
         "only the words after it, and the last one nothing (lesson 12)",
};

function drawAttention(d) {
  const w = d.words, T = w.length, dk = d.d_out_kq;
  const kq = [...Array(dk).keys()].map(String), vv = [...Array(d.d_out_v).keys()].map(String);
  const rd = Math.sqrt(dk);
  const box = el("attention-steps");
  box.replaceChildren();
  const add = (title, formula, M, opts) =>
    box.append(stepFigure(title, formula, M, { ...opts, article: articleRows(opts.name, d) }));
  box.append(h("figure", {}, h("figcaption", {}, "1. Words and ids"),
    h("div", { class: "formula wrap" }, "{s: i for i, s in enumerate(sorted(words))}: a word's position in " +
      d.sorted.join(", ") + (new Set(w).size < T ? " (a repeated word keeps its last position)" : "")),
    h("div", { class: "wrap" }, w.map((x, i) => x + " \u2192 " + d.ids[i]).join(",  "))));
  add("2. Embeddings x", "x = Embedding(50000, 3)(ids), drawn from seed 123", d.x,
    { name: "x", rows: w, explain: (i) => `x[${i}] = row ${d.ids[i]} of the embedding table ('${w[i]}')` });
  for (const [n, M] of [["W_query", d.W_query], ["W_key", d.W_key], ["W_value", d.W_value]])
    add("3. " + n, "rand(3, " + M[0].length + ") after manual_seed(123), in the order W_query, W_key, W_value",
      M, { name: n, explain: (i, j) => `${n}[${i}, ${j}]: a uniform draw from [0, 1)` });
  for (const [n, W, M] of [["queries", "W_query", d.queries], ["keys", "W_key", d.keys],
                           ["values", "W_value", d.values]])
    add("4. " + n, n + " = x @ " + W, M, { name: n, rows: w, cols: n === "values" ? vv : kq,
      explain: (i, j) => `${n}[${i}, ${j}] = x[${i}] \u00b7 ${W}[:, ${j}] = ${dot(d.x[i], col(d[W], j))}` });
  add("5. Scores", "scores = queries @ keys.T", d.scores, { name: "scores", rows: w, cols: w,
    explain: (i, j) => `scores[${i}, ${j}] = queries[${i}] \u00b7 keys[${j}] = ${dot(d.queries[i], d.keys[j])}` });
  add("6. Masked", MASK_WORDS[d.mask], d.masked, { name: "masked", rows: w, cols: w, hidden: d.hidden,
    explain: (i, j) => d.hidden[i][j] ? `masked[${i}, ${j}] = -inf: key '${w[j]}' is hidden from '${w[i]}'`
                                      : `masked[${i}, ${j}] = scores[${i}, ${j}]` });
  add("7. Scaled", "scaled = masked / sqrt(d_k) = masked / " + rd.toFixed(4), d.scaled,
    { name: "scaled", rows: w, cols: w, hidden: d.hidden,
      explain: (i, j) => `scaled[${i}, ${j}] = ${fmt(d.masked[i][j])} / ${rd.toFixed(4)}` });
  add("8. Attention weights", "weights = softmax(scaled, dim=1): each row sums to 1", d.weights,
    { name: "weights", rows: w, cols: w, kind: "weights", hidden: d.hidden,
      explain: (i, j) => {
        const row = d.scaled[i].map(num), top = Math.max(...row.filter(Number.isFinite));
        if (!Number.isFinite(top)) return `weights[${i}] = 0: '${w[i]}' has no key left to see`;
        return `weights[${i}, ${j}] = exp(scaled[${i}, ${j}] - ${fmt(top)}) / sum_k exp(scaled[${i}, k] - ${fmt(top)})` +
          ` = ${Number.isFinite(row[j]) ? "exp(" + fmt(row[j] - top) + ")" : "exp(-inf) = 0"} / ` +
          fmt(row.filter(Number.isFinite).reduce((s, v) => s + Math.exp(v - top), 0));
      } });
  add("9. Context vectors", "context = weights @ values", d.context, { name: "context", rows: w, cols: vv,
    explain: (i, j) => `context[${i}, ${j}] = weights[${i}] \u00b7 values[:, ${j}] = ${dot(d.weights[i], col(d.values, j))}` });
}

// dL/dscores by the softmax's Jacobian product, from qkv's weights and dL/dweights: what autograd
// computes, written out (and compared with it below the matrix).
function jacobianProduct(d) {
  const rd = Math.sqrt(d.d_out_kq);
  return d.weights.map((yr, i) => {
    const y = yr.map(num), dy = d.grad.weights[i].map(num);
    const s = y.reduce((acc, yk, k) => acc + dy[k] * yk, 0);
    return y.map((yj, j) => (yj * (dy[j] - s)) / rd);
  });
}

// dL/dcontext[i, j], spelt out for each loss.
function explainContextGrad(d, i, j) {
  if (d.loss_kind === "sum") return `dL/dcontext[${i}, ${j}] = 1: L = context.sum() counts each entry once`;
  if (d.loss_kind === "target") return `dL/dcontext[${i}, ${j}] = R[${i}, ${j}] = ${fmt(d.R[i][j])}`;
  const T = d.words.length;
  if (i === T - 1) return `dL/dcontext[${i}, ${j}] = 0: the last word has no next word to predict`;
  const z = d.logits[i].map(num), top = Math.max(...z), e = z.map((v) => Math.exp(v - top));
  const total = e.reduce((a, b) => a + b, 0), target = Number(d.ids[i + 1]);
  const terms = e.map((v, c) => `(${fmt(v / total)} - ${c === target ? 1 : 0})\u00b7${fmt(d.W_out[j][c])}`);
  return `dL/dcontext[${i}, ${j}] = sum_c (softmax(logits[${i}])[c] - [c is '${d.words[i + 1]}', id ${target}]) * W_out[${j}, c] / ${T - 1}\n= (${terms.join(" + ")}) / ${T - 1}`;
}

const LOSS_WORDS = {
  sum: "L = context.sum() (lesson 13)",
  target: "L = (context * R).sum(), R = rand(T, d_out_v) drawn after W_value",
  next_token: "L = cross_entropy(context @ W_out, next word), W_out = rand(d_out_v, V) drawn after W_value",
};

function drawBackward(d) {
  const w = d.words, g = d.grad;
  const kq = [...Array(d.d_out_kq).keys()].map(String), vv = [...Array(d.d_out_v).keys()].map(String);
  const box = el("backward-steps");
  box.replaceChildren();
  const add = (title, formula, M, opts) =>
    box.append(stepFigure(title, formula, M, { ...opts, article: articleRows(opts.name, d) }));
  box.append(h("figure", {}, h("figcaption", {}, "The loss"), h("div", { class: "formula" }, LOSS_WORDS[d.loss_kind]),
    h("div", {}, "L = " + full(num(d.loss)))));
  add("dL/d context", d.loss_kind === "sum" ? "every entry 1: each output counts once" :
      d.loss_kind === "target" ? "dL/dcontext = R" : "(softmax(logits) - one_hot(next word)) @ W_out.T / (T - 1); the last word predicts nothing",
    g.context, { name: "grad.context", rows: w, cols: vv, explain: (i, j) => explainContextGrad(d, i, j) });
  add("dL/d weights", "dL/dweights = dL/dcontext @ values.T", g.weights, { name: "grad.weights", rows: w, cols: w,
    explain: (i, j) => `dL/dweights[${i}, ${j}] = dL/dcontext[${i}] \u00b7 values[${j}] = ${dot(g.context[i], d.values[j])}` });
  const J = jacobianProduct(d);
  let worst = 0;
  g.scores.forEach((r, i) => r.forEach((v, j) => (worst = Math.max(worst, Math.abs(num(v) - J[i][j])))));
  const fig = stepFigure("dL/d scores",
    "softmax's Jacobian product: y * (dy - sum(dy * y)) / sqrt(d_k), y = weights, dy = dL/dweights",
    g.scores, { name: "grad.scores", rows: w, cols: w, hidden: d.hidden, gradient: true, article: articleRows("grad.scores", d),
      explain: (i, j) => d.hidden[i][j] ? `dL/dscores[${i}, ${j}] = 0 exactly: its weight is 0, and y * (...) with y = 0 is 0`
        : `dL/dscores[${i}, ${j}] = ${fmt(d.weights[i][j])} * (${fmt(g.weights[i][j])} - ${fmt(d.weights[i].map(num).reduce((s, y, k) => s + y * num(g.weights[i][k]), 0))}) / ${Math.sqrt(d.d_out_kq).toFixed(4)}` });
  fig.append(h("div", { class: "note" }, "the formula, computed here in JavaScript from qkv's weights and dL/dweights, " +
    "agrees with autograd's to " + worst.toExponential(1)));
  box.append(fig);
  // The gradients of queries, keys and values, which the weight gradients are made from.
  const matmulJS = (A, B) => A.map((r) => B[0].map((_, j) => r.reduce((acc, a, k) => acc + num(a) * num(B[k][j]), 0)));
  const tr = (A) => A[0].map((_, j) => A.map((r) => r[j]));
  const dq = matmulJS(g.scores, d.keys), dk = matmulJS(tr(g.scores), d.queries), dv = matmulJS(tr(d.weights), g.context);
  const weightGrad = (title, name, G, inner, innerName, formula, cols) =>
    add(title, formula, G, { name: "grad." + name, cols,
      explain: (a, b) => `dL/d${name}[${a}, ${b}] = sum_i x[i, ${a}] * ${innerName}[i, ${b}] = ` +
        `${dot(col(d.x, a), col(inner, b))}\n(${innerName} = ${formula.split(" @ (")[1].slice(0, -1)})` });
  weightGrad("dL/d W_query", "W_query", g.W_query, dq, "dL/dqueries", "dL/dW_query = x.T @ (dL/dscores @ keys)", kq);
  weightGrad("dL/d W_key", "W_key", g.W_key, dk, "dL/dkeys", "dL/dW_key = x.T @ (dL/dscores.T @ queries)", kq);
  weightGrad("dL/d W_value", "W_value", g.W_value, dv, "dL/dvalues", "dL/dW_value = x.T @ (weights.T @ dL/dcontext)", vv);
}

// ---- view 4: many heads -----------------------------------------------------------------------
// The key-value heads to choose from: the divisors of the heads; as many as the heads (plain
// multi-head attention) when the number of heads changes.
function updateKvChoices() {
  const heads = Number(el("num-heads").value), kvSelect = el("kv-heads");
  kvSelect.replaceChildren();
  for (let k = 1; k <= heads; ++k)
    if (heads % k === 0) kvSelect.append(h("option", k === heads ? { selected: "" } : {}, String(k)));
}

function updateHeads() {
  const heads = Number(el("num-heads").value);
  const kvSelect = el("kv-heads");
  if (kvSelect.options.length === 0) updateKvChoices();
  const kv = Number(kvSelect.value);
  const d = api.heads(el("text").value, heads, kv);
  if (d.error) { el("heads-message").textContent = d.error; return false; }
  el("heads-message").textContent = "";
  const box = el("heads-maps");
  box.replaceChildren();
  for (const head of d.heads)
    box.append(stepFigure(`head ${head.head}` + (kv < heads ? ` (keys and values of group ${head.kv_head})` : ""),
      `softmax(causal(queries_${head.head} @ keys_${head.kv_head}.T) / sqrt(2))`, head.weights,
      { rows: d.words, cols: d.words, kind: "weights",
        explain: (i, j) => j > i ? `head ${head.head}: '${d.words[j]}' comes after '${d.words[i]}': hidden, weight 0`
          : `head ${head.head}: score of '${d.words[j]}' for '${d.words[i]}' = queries[${i}] \u00b7 keys[${j}] / sqrt(2) = ` +
            `(${dot(head.queries[i], head.keys[j])}) / 1.4142; its weight = exp(score) / the sum of exp over '${d.words[0]}'..'${d.words[i]}'` }));
  return true;
}

// ---- view 3: the tiny GPT, training -------------------------------------------------------------
const RUNS = ["causal", "no_mask"];
const COLOURS = { causal: "#1f77b4", no_mask: "#d62728" };
const kSteps = 1500, kEvalEvery = 100;  // lesson 16's
const train = { generation: 0, running: false, steps: 0, losses: { causal: [], no_mask: [] },
                evals: { causal: [], no_mask: [] }, stopAt: kSteps, msTimed: 0, stepsTimed: 0,
                chores: [], longestSliceMs: 0 };

function resetTraining() {
  train.generation++;  // a slice of the old run still queued sees this and stops
  train.running = false;
  train.chores = [];
  const info = api.reset();
  train.steps = 0;
  for (const r of RUNS) { train.losses[r] = []; train.evals[r] = []; }
  el("train-info").textContent = `${info.parameters} parameters; n_embd ${info.n_embd}, n_head ${info.n_head}, ` +
    `n_layer ${info.n_layer}, block ${info.block}, batch ${info.batch}, AdamW lr ${info.lr}, seed ${info.seed}; ` +
    `${info.characters} characters of ${info.vocab_size} kinds.`;
  el("train-status").textContent = "step 0 of " + kSteps;
  el("train-message").textContent = "";
  for (const r of RUNS) { evaluateRun(r); drawMaps(r); }
  drawChart();
}

function evaluateRun(run) {
  const e = api.evaluate(run);
  if (e.error) { el("train-message").textContent = e.error; return; }
  train.evals[run].push(e);
}
// The same evaluation as a chore of one batch, which queues the next batch's chore first in line
// until the last.
function evaluationChore(run) {
  return () => {
    const e = api.evaluatePart(run);
    if (e.error) { el("train-message").textContent = e.error; return; }
    if (e.done === false) train.chores.unshift(evaluationChore(run));
    else train.evals[run].push(e);
  };
}

// One slice: a step of each run, or one of the chores due every 100th step (each run's
// evaluation, its maps, the samples); then the browser draws and handles clicks before the next
// slice, so the page never waits on more than one of them.
function trainSlice(generation) {
  if (generation !== train.generation || !train.running) return;
  const t0 = performance.now();
  if (train.chores.length > 0) {
    train.chores.shift()();
    train.longestSliceMs = Math.max(train.longestSliceMs, performance.now() - t0);
    if (train.chores.length === 0) drawChart();
    if (train.chores.length === 0 && train.steps >= train.stopAt) {
      train.running = false;
      el("train-status").textContent += "; done";
      return;
    }
    setTimeout(() => trainSlice(generation), 0);
    return;
  }
  for (const r of RUNS) {
    const s = api.step(r);
    if (s.error) { train.running = false; el("train-message").textContent = s.error; return; }
    train.losses[r].push(num(s.loss));
  }
  train.steps++;
  train.stepsTimed++;
  train.msTimed += performance.now() - t0;
  train.longestSliceMs = Math.max(train.longestSliceMs, performance.now() - t0);
  if (train.steps % kEvalEvery === 0 || train.steps === train.stopAt)
    for (const r of RUNS) train.chores.push(evaluationChore(r), () => drawMaps(r));
  // The samples during a run are shorter than the button's, to keep each chore short.
  if (train.steps % kEvalEvery === 0 || train.steps === train.stopAt)
    for (const r of RUNS) train.chores.push(() => sampleRun(r, 100));
  if (train.steps % 5 === 0 || train.steps === train.stopAt) drawChart();
  el("train-status").textContent = `step ${train.steps} of ${kSteps}; ` +
    (1000 * train.stepsTimed / train.msTimed).toFixed(1) + " steps/s (both runs)";
  if (train.steps >= train.stopAt && train.chores.length === 0) {
    train.running = false;
    el("train-status").textContent += "; done";
    return;
  }
  setTimeout(() => trainSlice(generation), 0);
}

function startTraining() {
  if (train.steps >= train.stopAt) {
    el("train-message").textContent = `the run is done at step ${train.steps}: Reset to train again`;
    return;
  }
  if (train.running) return;
  el("train-message").textContent = "";
  train.running = true;
  const generation = train.generation;
  setTimeout(() => trainSlice(generation), 0);
}
function pauseTraining() {
  if (!train.running) return;
  train.running = false;
  el("train-status").textContent = `paused at step ${train.steps} of ${kSteps}`;
  for (const r of RUNS) drawMaps(r);
}

// Lesson 16's figure: each run's training loss (10-step mean), validation loss and the
// validation loss at the last position of the context.
function drawChart() {
  const W = 640, H = 260, L = 44, B = 28, top = 10, R = 24;
  const all = [];
  for (const r of RUNS) { all.push(...train.losses[r]); for (const e of train.evals[r]) all.push(num(e.val), num(e.val_last)); }
  const ymax = Math.max(3.6, ...all.filter(Number.isFinite)), ymin = 0;
  const x = (s) => L + (W - L - R) * s / kSteps, y = (v) => top + (H - top - B) * (1 - (v - ymin) / (ymax - ymin));
  let svg = `<svg viewBox="0 0 ${W} ${H}" width="100%" style="max-width:${W}px; font-size:14px" role="img" aria-label="loss curves">`;
  for (let v = 0; v <= ymax; v += 0.5)
    svg += `<line x1="${L}" x2="${W - R}" y1="${y(v)}" y2="${y(v)}" stroke="#eee"/><text x="${L - 6}" y="${y(v) + 4}" text-anchor="end">${v.toFixed(1)}</text>`;
  for (let s = 0; s <= kSteps; s += 300) svg += `<text x="${x(s)}" y="${H - 8}" text-anchor="middle">${s}</text>`;
  for (const r of RUNS) {
    const ls = train.losses[r];
    const pts = ls.map((_, i) => { const from = Math.max(0, i - 9), win = ls.slice(from, i + 1);
      return `${x(i).toFixed(1)},${y(win.reduce((a, b) => a + b, 0) / win.length).toFixed(1)}`; });
    if (pts.length > 1) svg += `<polyline fill="none" stroke="${COLOURS[r]}" stroke-width="1.2" points="${pts.join(" ")}"/>`;
    for (const [key, dash] of [["val", "6 3"], ["val_last", "2 3"]]) {
      const ev = train.evals[r].map((e) => `${x(num(e.step)).toFixed(1)},${y(num(e[key])).toFixed(1)}`);
      if (ev.length > 1) svg += `<polyline fill="none" stroke="${COLOURS[r]}" stroke-width="2" stroke-dasharray="${dash}" points="${ev.join(" ")}"/>`;
    }
  }
  svg += "</svg>";
  const latest = RUNS.map((r) => { const e = train.evals[r][train.evals[r].length - 1];
    return e ? `${r === "causal" ? "causal" : "no mask"} at step ${e.step}: train ${fmt(e.train)}, val ${fmt(e.val)}, val_last ${fmt(e.val_last)}` : ""; });
  const legend = `<div class="note"><span style="color:${COLOURS.causal}">\u25a0 causal mask</span> ` +
    `<span style="color:${COLOURS.no_mask}">\u25a0 no mask</span>; solid: training loss (mean of ` +
    `10 steps), dashed: validation, dotted: validation at the last position of the context.</div>`;
  el("train-chart").innerHTML = legend + svg + `<div class="note">${latest.join("; ")}</div>`;
}

// Every head's attention on the first 24 validation characters, one small map each.
function drawMaps(run) {
  const m = api.maps(run);
  const box = el("maps-" + run);
  if (m.error) { el("train-message").textContent = m.error; return; }
  box.replaceChildren();
  const label = (c) => (c === " " ? "\u2423" : c === "\n" ? "\u21b5" : c);
  m.layers.forEach((heads, l) => heads.forEach((M, hd) => {
    const T = M.length, cell = 8, pad = 14;
    let svg = `<svg viewBox="0 0 ${pad + T * cell} ${pad + T * cell}" width="100%" role="img" aria-label="layer ${l} head ${hd}">`;
    for (let i = 0; i < T; ++i) {
      svg += `<text x="0" y="${pad + i * cell + 7}" style="font-size:7px">${escapeHtml(label(m.chars[i]))}</text>`;
      for (let j = 0; j < T; ++j) {
        const v = num(M[i][j]);
        svg += `<rect x="${pad + j * cell}" y="${pad + i * cell}" width="${cell}" height="${cell}" fill="${colour(v, 1, "weights") || "#fff"}"><title>layer ${l}, head ${hd}: '${escapeHtml(label(m.chars[i]))}' reads '${escapeHtml(label(m.chars[j]))}' with weight ${fmt(v)}</title></rect>`;
      }
    }
    box.insertAdjacentHTML("beforeend", `<figure><figcaption>layer ${l}, head ${hd} (step ${m.step})</figcaption>${svg}</svg></figure>`);
  }));
}
const escapeHtml = (s) => s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c]);

// n characters from the prompt, from one run; false (and a message) if the prompt is refused.
function sampleRun(run, n) {
  const s = api.sample(run, el("prompt").value, n);
  if (s.error) {
    el("sample-message").textContent = s.error;
    for (const q of RUNS) el("sample-" + q).textContent = "";
    return false;
  }
  el("sample-message").textContent = "";
  el("sample-" + run).textContent = `(step ${s.step}) ` + s.text;
  return true;
}
const sampleBoth = () => RUNS.every((r) => sampleRun(r, 200));

// ---- the self-check -----------------------------------------------------------------------------
function selfCheck() {
  const results = [];
  const check = (ok, text) => results.push({ ok: !!ok, text });
  // 1. Every number of the reference cases, against the native build's.
  const r = compareNumbers(QKV_REFERENCE, api.reference());
  check(r.ok, `${r.values} numbers against the native build's: ${r.identical} the same float, ` +
    `the largest difference ${r.worst.toExponential(2)}${r.where ? " (" + r.where + ")" : ""}` +
    (r.ok ? "" : "; " + r.mismatch));
  // 2. The article's and lesson 13's printed digits, in the views that show them.
  for (const mask of ["none", "causal"]) {
    const d = api.attention(ARTICLE_TEXT, mask, "sum");
    for (const a of ARTICLE.filter((x) => x.mask === null || x.mask === mask)) {
      const M = a.m.startsWith("grad.") ? d.grad[a.m.slice(5)] : d[a.m];
      const bad = a.rows.findIndex((_, i) => !rowMatches(a, M, i));
      check(bad < 0, `${a.m} (mask ${mask}): ${a.by}'s digits` + (bad < 0 ? "" : `, row ${bad}: ${rowText(M[bad])}`));
    }
    // 3. dL/dscores: the Jacobian product written out equals autograd's; hidden scores get 0.
    for (const loss of ["sum", "target", "next_token"]) {
      const e = api.attention(ARTICLE_TEXT, mask, loss), J = jacobianProduct(e);
      let worst = 0, zeros = true;
      e.grad.scores.forEach((row, i) => row.forEach((v, j) => {
        worst = Math.max(worst, Math.abs(num(v) - J[i][j]));
        if (e.hidden[i][j] && num(v) !== 0) zeros = false;
      }));
      check(worst <= 1e-6 && zeros, `mask ${mask}, loss ${loss}: y * (dy - sum(dy * y)) / sqrt(d_k) is autograd's dL/dscores ` +
        `(to ${worst.toExponential(1)}), exactly 0 at every hidden score`);
    }
  }
  // 4. Bad input: a message in the page, and the last good view still shown.
  const before = el("attention-steps").childElementCount;
  const tryText = (text, needle, what) => {
    el("text").value = text;
    const ok = updateAttention();
    check(!ok && el("sentence-message").textContent.includes(needle) &&
          el("attention-steps").childElementCount === before, `${what}: "${el("sentence-message").textContent}"`);
  };
  tryText("", "no words", "an empty text");
  tryText("   ,  ", "no words", "a text of spaces and commas");
  tryText("one two three four five six seven eight nine ten eleven twelve thirteen", "at most 12", "a text longer than the page shows");
  tryText("Life is\0 short", "NUL", "a text with a NUL character");
  el("text").value = "the cat sat on the mat";
  el("loss").value = "next_token";
  check(updateAttention() && state.data.ids.join(" ") === "5 0 3 2 5 1",
        "a repeated word keeps its last position, and next-word loss takes every id: ids " +
        (state.data ? state.data.ids.join(" ") : "none"));
  el("loss").value = "sum";
  el("text").value = ARTICLE_TEXT;
  check(updateAttention() && el("sentence-message").textContent === "", "the article's sentence again: no message");
  el("prompt").value = "the caf\u00e9 \u20ac";
  check(!sampleBoth() && el("sample-message").textContent.includes("never uses"),
        `a prompt with characters outside the vocabulary: "${el("sample-message").textContent}"`);
  el("prompt").value = "x".repeat(40);
  check(!sampleBoth() && el("sample-message").textContent.includes("at most 32"),
        `a prompt longer than the context: "${el("sample-message").textContent}"`);
  el("prompt").value = "the ";
  el("num-heads").value = "8";
  updateKvChoices();
  el("kv-heads").value = "1";
  el("num-heads").value = "4";
  updateKvChoices();
  check(el("kv-heads").value === "4", "a new number of heads starts with as many key-value heads");
  updateHeads();
  el("text").value = "";
  check(!updateHeads() && el("heads-message").textContent.includes("no words") && el("heads-maps").childElementCount === 4,
        `an empty text in the heads view: "${el("heads-message").textContent}"`);
  el("text").value = ARTICLE_TEXT;
  updateHeads();
  // 5. Reset while a run is under way, and pause: the run stops where it is, nothing breaks.
  resetTraining();
  startTraining();
  trainSlice(train.generation);  // a step now, as if its slice had come
  const stepsBeforeReset = train.steps;
  resetTraining();               // mid-run: the queued slice belongs to the old run
  check(stepsBeforeReset === 1 && train.steps === 0 && !train.running && train.losses.causal.length === 0 &&
        el("train-message").textContent === "", "reset in the middle of a run: back to step 0, no error");
  startTraining();
  trainSlice(train.generation);
  pauseTraining();
  const paused = train.steps;
  trainSlice(train.generation);  // a slice still queued when pause was pressed
  check(paused === 1 && train.steps === 1 && train.losses.no_mask.length === 1,
        "pause: a slice still queued runs no step");
  // An evaluation a batch at a time gives the bits of one taken at once (both of fresh runs).
  resetTraining();
  const whole = train.evals.causal[0];
  let part = { done: false };
  for (let i = 0; i < 100 && part.done === false; ++i) part = api.evaluatePart("causal");
  check(["train", "val", "val_last"].every((k) => part[k] === whole[k]),
        `an evaluation a batch at a time gives the same numbers as at once (val ${fmt(part.val)})`);
  resetTraining();
  // The verdict, for a person and for the CI test that reads the page.
  const list = el("selfcheck-results");
  list.replaceChildren(...results.map((x) => h("li", { class: x.ok ? "pass" : "fail" }, (x.ok ? "pass: " : "FAIL: ") + x.text)));
  const failed = results.filter((x) => !x.ok).length;
  const verdict = el("selfcheck-verdict");
  verdict.dataset.verdict = failed ? "fail" : "pass";
  verdict.textContent = failed ? `${failed} of ${results.length} checks failed` : `all ${results.length} checks passed`;
}

// The self-check, with any exception it meets written into the verdict (a failure, not a page
// that stops answering).
function runSelfCheck() {
  // What the learner had typed and chosen comes back afterwards (the run of the tiny GPT does
  // not: the check resets it, as the button says).
  const kept = ["text", "prompt", "num-heads", "loss"].map((id) => [id, el(id).value]);
  const mask = document.querySelector("input[name=mask]:checked").value, kv = el("kv-heads").value;
  try {
    selfCheck();
  } catch (e) {
    const verdict = el("selfcheck-verdict");
    verdict.dataset.verdict = "fail";
    verdict.textContent = "the self-check stopped: " + e + (e.stack ? "\n" + e.stack : "");
  }
  for (const [id, value] of kept) el(id).value = value;
  document.querySelector(`input[name=mask][value=${mask}]`).checked = true;
  updateKvChoices();
  el("kv-heads").value = kv;
  updateAttention();
  updateHeads();
}

// ---- the page ---------------------------------------------------------------------------------
function showView() {
  const name = (location.hash.slice(1).split("&")[0]) || "attention";
  for (const s of document.querySelectorAll("main section")) s.classList.toggle("current", s.id === "view-" + name);
  for (const a of document.querySelectorAll("nav a")) a.classList.toggle("current", a.getAttribute("href") === "#" + name);
  el("sentence-controls").style.display = ["attention", "backward", "heads"].includes(name) ? "" : "none";
  el("mask-loss").style.display = name === "heads" ? "none" : "";
  el("sentence-message").style.display = ["attention", "backward"].includes(name) ? "" : "none";
}

// The module is compiled as the page loads (tutorials/explorer/CMakeLists.txt): createQkv gives it
// at once; Promise.resolve takes a promise of it as well.
Promise.resolve().then(() => createQkv()).then((module) => {
  qkv = module;
  for (const a of document.querySelectorAll("a.lesson")) { a.href = QKV_SOURCE_DIR + a.dataset.file; a.title = a.dataset.file; }
  el("text").addEventListener("input", () => { updateAttention(); updateHeads(); });
  for (const r of document.querySelectorAll("input[name=mask]")) r.addEventListener("change", updateAttention);
  el("loss").addEventListener("change", updateAttention);
  el("num-heads").addEventListener("change", () => { updateKvChoices(); updateHeads(); });
  el("kv-heads").addEventListener("change", updateHeads);
  el("train-start").addEventListener("click", startTraining);
  el("train-pause").addEventListener("click", pauseTraining);
  el("train-reset").addEventListener("click", resetTraining);
  el("sample").addEventListener("click", sampleBoth);
  el("selfcheck-run").addEventListener("click", runSelfCheck);
  window.addEventListener("hashchange", showView);
  showView();
  updateAttention();
  updateHeads();
  resetTraining();
  // #selfcheck runs it at once (CI reads the verdict); #train&steps=N trains N steps and stops.
  const params = new URLSearchParams(location.hash.slice(1).replace(/^[^&]*&?/, ""));
  if (location.hash.startsWith("#selfcheck")) runSelfCheck();
  if (params.has("steps")) { train.stopAt = Math.min(kSteps, Number(params.get("steps")) || 0); startTraining(); }
}).catch((e) => {
  // A browser without WebAssembly (or with it turned off) gets a sentence, not a blank page.
  el("sentence-message").textContent = "qkv could not start in this browser: " + e;
  el("selfcheck-verdict").dataset.verdict = "fail";
  el("selfcheck-verdict").textContent = "qkv could not start: " + e;
});
