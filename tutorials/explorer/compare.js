// compare.js: holds one set of the explorer's numbers to another: the page's self-check holds
// what the WebAssembly module computes to what the native build printed (reference.json), and
// ctest explorer_wasm_matches_native does the same under Node.js.
//
// Numbers match when they are the same float, or within 2e-6 of each other, relative to the
// larger of 1 and the expected value's size. They differ where the operations do: WebAssembly
// has no fused multiply-add, so each product and each e^x of the native build (FMA on x86-64 and
// ARM) is rounded once more there, a few units in the last place of a float; a gradient that is
// a difference of nearly equal terms (dL/dW_key through softmax's Jacobian) carries that into
// its sixth digit. Everything else (words, sampled text, "-inf" for a hidden score) must be
// equal.
"use strict";

const kTolerance = 2e-6;

// {ok, values, identical, worst, where, mismatch}: `values` numbers compared, `identical` of
// them the same bits, `worst` the largest difference, `mismatch` the first failure's path.
function compareNumbers(expected, actual) {
  const report = { ok: true, values: 0, identical: 0, worst: 0, where: "", mismatch: "" };
  const fail = (path, why) => {
    if (report.ok) report.mismatch = path + ": " + why;
    report.ok = false;
  };
  const walk = (e, a, path) => {
    if (typeof e === "number") {
      if (typeof a !== "number") return fail(path, "expected " + e + ", got " + JSON.stringify(a));
      report.values++;
      if (Object.is(Math.fround(e), Math.fround(a))) { report.identical++; return; }
      const diff = Math.abs(e - a);
      if (diff > report.worst) { report.worst = diff; report.where = path; }
      if (!(diff <= kTolerance * Math.max(1, Math.abs(e)))) fail(path, "expected " + e + ", got " + a);
    } else if (Array.isArray(e)) {
      if (!Array.isArray(a) || a.length !== e.length)
        return fail(path, "expected " + e.length + " items, got " + JSON.stringify(a).slice(0, 80));
      e.forEach((item, i) => walk(item, a[i], path + "[" + i + "]"));
    } else if (e !== null && typeof e === "object") {
      if (a === null || typeof a !== "object") return fail(path, "expected an object");
      for (const key of Object.keys(e)) walk(e[key], a[key], path + "." + key);
      for (const key of Object.keys(a)) if (!(key in e)) fail(path + "." + key, "not expected");
    } else if (e !== a) {
      fail(path, "expected " + JSON.stringify(e) + ", got " + JSON.stringify(a));
    }
  };
  walk(expected, actual, "");
  return report;
}

if (typeof module !== "undefined") module.exports = { compareNumbers, kTolerance };
