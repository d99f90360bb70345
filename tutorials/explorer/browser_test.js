// browser_test.js: opens explorer.html in headless Chromium and reads what the page says.
//
//   node browser_test.js PAGE OUT_DIR [CHROMIUM]
//
// It runs the page's self-check and fails unless its verdict is "pass"; then shows each view and
// keeps a screenshot of it in OUT_DIR (at 1280 x 800, and the attention view at a phone's 390 x
// 844); then trains the tiny GPT in the page for 100 steps and writes the page's training speed
// to OUT_DIR/speed.json. It speaks the DevTools protocol over a pipe (--remote-debugging-pipe):
// JSON messages, each ended by a NUL byte, on file descriptors 3 (to Chromium) and 4 (from it).
// No library: Node.js's own child_process and fs.
"use strict";
const { spawn } = require("child_process");
const fs = require("fs");
const path = require("path");

const [page, outDir, chromium = "chromium"] = process.argv.slice(2);
if (!page || !outDir) {
  console.error("usage: node browser_test.js PAGE OUT_DIR [CHROMIUM]");
  process.exit(2);
}
fs.mkdirSync(outDir, { recursive: true });
const url = "file://" + path.resolve(page);

// A headless page counts as hidden, and a hidden page's timers are slowed to one a second: the
// training, which runs a step per timer, would crawl. A learner's visible tab is not slowed.
const browser = spawn(chromium, ["--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
                                 "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
                                 "--disable-backgrounding-occluded-windows", "--window-size=1280,800",
                                 "about:blank"],
                      { stdio: ["ignore", "ignore", "ignore", "pipe", "pipe"] });
const toBrowser = browser.stdio[3], fromBrowser = browser.stdio[4];
let nextId = 1, buffer = "";
const waiting = new Map();
fromBrowser.on("data", (chunk) => {
  buffer += chunk.toString("utf8");
  let end;
  while ((end = buffer.indexOf("\0")) >= 0) {
    const message = JSON.parse(buffer.slice(0, end));
    buffer = buffer.slice(end + 1);
    const w = waiting.get(message.id);
    if (message.method === "Runtime.exceptionThrown") {
      const d = message.params.exceptionDetails;
      fail("the page threw: " + (d.exception?.description || d.text));
    } else if (message.method === "Runtime.consoleAPICalled" && message.params.type === "error") {
      fail("the page logged an error: " + message.params.args.map((a) => a.value ?? a.description).join(" "));
    }
    if (!w) continue;
    waiting.delete(message.id);
    if (message.error) w.reject(new Error(JSON.stringify(message.error)));
    else w.resolve(message.result);
  }
});
function send(method, params = {}, sessionId) {
  const id = nextId++;
  toBrowser.write(JSON.stringify({ id, method, params, sessionId }) + "\0");
  return new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let failed = false;
function fail(message) {
  console.log("error: " + message);
  failed = true;
}

async function main() {
  const { targetId } = await send("Target.createTarget", { url: "about:blank" });
  const { sessionId } = await send("Target.attachToTarget", { targetId, flatten: true });
  const page = (method, params) => send(method, params, sessionId);
  const evaluate = async (expression) =>
    (await page("Runtime.evaluate", { expression, returnByValue: true })).result.value;
  // Waits (in real time) until `expression` is true in the page, or `seconds` pass.
  const until = async (expression, seconds) => {
    for (const end = Date.now() + seconds * 1000; Date.now() < end; await sleep(100))
      if (await evaluate(expression)) return true;
    return false;
  };
  const screenshot = async (name) => {
    const { data } = await page("Page.captureScreenshot", { format: "png", captureBeyondViewport: false });
    fs.writeFileSync(path.join(outDir, name + ".png"), Buffer.from(data, "base64"));
  };
  await page("Page.enable");
  await page("Runtime.enable");
  await page("Page.navigate", { url: url + "#selfcheck" });

  // The self-check.
  const verdictOf = "document.getElementById('selfcheck-verdict')?.dataset.verdict";
  if (!(await until(`${verdictOf} === 'pass' || ${verdictOf} === 'fail'`, 120))) {
    fail("the self-check gave no verdict within 120 s");
  } else {
    const results = await evaluate("[...document.querySelectorAll('#selfcheck-results li')].map((li) => li.textContent)");
    for (const line of results) console.log("  " + line);
    const verdict = await evaluate("document.getElementById('selfcheck-verdict').textContent");
    console.log("self-check: " + verdict);
    if ((await evaluate(verdictOf)) !== "pass") fail("the self-check failed");
  }
  await screenshot("selfcheck");

  // Each view, as a learner opens it.
  for (const view of ["attention", "backward", "heads"]) {
    await evaluate(`location.hash = '#${view}'`);
    await sleep(300);
    await screenshot(view);
  }
  // Training: 100 steps of both runs, timed by the page itself.
  await evaluate("location.hash = '#train'; resetTraining(); train.stopAt = 100; startTraining(); true");
  if (!(await until("train.steps >= 100 && !train.running", 600))) fail("100 training steps did not finish in 600 s");
  if (!(await evaluate("train.evals.causal.length === 2 && train.evals.no_mask.length === 2 && document.getElementById('sample-causal').textContent.startsWith('(step 100)')")))
    fail("the run did not evaluate and sample both models at step 100");
  const speed = await evaluate("({page_loop: {steps_of_both_runs: train.stepsTimed, ms: train.msTimed, longest_slice_ms: train.longestSliceMs}, message: document.getElementById('train-message').textContent})");
  if (speed.message) fail("training said: " + speed.message);
  await screenshot("train");
  // The speed of training alone (no drawing): 100 steps of one run, as bench/explorer_speed.sh
  // times the native build.
  speed.timed = await evaluate("api.timeSteps(100)");
  if (speed.timed.error) fail("timing said: " + speed.timed.error);
  console.log(`training in the page: ${speed.page_loop.steps_of_both_runs} steps of both runs in ` +
              `${(speed.page_loop.ms / 1000).toFixed(1)} s, drawing included; one run alone: ` +
              `${(speed.timed.steps / speed.timed.seconds).toFixed(1)} steps/s; the longest the page ` +
              `waited on one slice: ${speed.page_loop.longest_slice_ms.toFixed(0)} ms`);
  delete speed.message;
  fs.writeFileSync(path.join(outDir, "speed.json"), JSON.stringify(speed, null, 1) + "\n");
  // A phone's screen.
  await page("Emulation.setDeviceMetricsOverride", { width: 390, height: 844, deviceScaleFactor: 2, mobile: true });
  await evaluate("location.hash = '#attention'");
  await sleep(300);
  await screenshot("attention-phone");
}

main().catch((e) => fail(String(e))).finally(() => {
  browser.kill();
  console.log(failed ? "browser test: FAILED" : "browser test: passed; screenshots in " + outDir);
  process.exit(failed ? 1 : 0);
});
