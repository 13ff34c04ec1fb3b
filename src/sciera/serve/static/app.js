// sciera's web page: no build step, no external resources. Everything a passage or a
// report brings is untrusted: it reaches the page only through textContent and element
// attributes set one by one, never through innerHTML.
"use strict";

const $ = (id) => document.getElementById(id);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

function headers(json = true) {
  const h = {};
  if (json) h["Content-Type"] = "application/json";
  const key = sessionStorage.getItem("sciera-api-key");
  if (key) h["Authorization"] = "Bearer " + key;
  return h;
}

async function errorText(resp) {
  try {
    const body = await resp.json();
    if (body && body.error) return `${resp.status}: ${body.error}`;
  } catch (_) { /* not JSON */ }
  return `${resp.status} ${resp.statusText}`;
}

function showError(id, message) {
  const box = $(id);
  box.textContent = message || "";
  box.hidden = !message;
}

const fmt = (x, digits = 3) => (typeof x === "number" ? x.toFixed(digits) : "");

// ---------------------------------------------------------------- views

const VIEWS = ["ask", "experiments", "ssli"];

function route() {
  const wanted = location.hash.slice(1);
  const view = VIEWS.includes(wanted) ? wanted : "ask";
  for (const name of VIEWS) $("view-" + name).hidden = view !== name;
  for (const name of VIEWS) {
    const link = $("nav-" + name);
    if (name === view) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  if (view === "experiments") loadExperiments();
  if (view === "ssli") loadSSLIExperiments();
}

// ---------------------------------------------------------------- ask

async function loadCorpora() {
  const select = $("corpus");
  try {
    const resp = await fetch("v1/corpora", { headers: headers(false) });
    if (!resp.ok) return showError("ask-error", "corpora: " + (await errorText(resp)));
    const body = await resp.json();
    const corpora = Array.isArray(body) ? body : body.corpora || [];
    select.replaceChildren(
      ...corpora.map((c) => el("option", { value: c.name, text: c.name }))
    );
  } catch (err) {
    showError("ask-error", "corpora: " + err);
  }
}

const STAGES = [
  ["retrieved", "Retrieve candidates"],
  ["reranked", "Rerank and filter"],
  ["evidence", "Extract evidence"],
  ["answer", "Write the answer"],
];

function resetStages() {
  $("stages").replaceChildren(
    ...STAGES.map(([name, label]) =>
      el("li", { id: "stage-" + name, class: "pending" }, el("span", { text: label }),
        el("span", { class: "detail" }))
    )
  );
  $("stages").firstChild.className = "running";
}

function stageDone(name, detail) {
  const item = $("stage-" + name);
  if (!item) return;
  item.className = "done";
  item.querySelector(".detail").textContent = detail;
  const next = item.nextElementSibling;
  if (next) next.className = "running";
}

// Server-Sent Events from a POST: read the body stream and split it into events.
async function* sseEvents(resp) {
  const reader = resp.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true }).replace(/\r\n/g, "\n");
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let event = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length) yield [event, JSON.parse(data.join("\n"))];
    }
  }
}

let state = null;
let controller = null;

async function ask(event) {
  event.preventDefault();
  const question = $("question").value.trim();
  if (!question) return showError("ask-error", "Write a question first.");
  if (controller) controller.abort();
  controller = new AbortController();
  showError("ask-error", "");
  $("answer-box").hidden = true;
  resetStages();
  state = { texts: {}, table: [], trace: null, evidenceTrace: null, evidence: [] };
  $("ask-button").disabled = true;
  try {
    const resp = await fetch("v1/ask", {
      method: "POST",
      headers: { ...headers(), Accept: "text/event-stream" },
      body: JSON.stringify({ question, corpus: $("corpus").value || undefined, stream: true }),
      signal: controller.signal,
    });
    if (!resp.ok) throw new Error(await errorText(resp));
    for await (const [name, data] of sseEvents(resp)) onEvent(name, data);
  } catch (err) {
    if (err.name !== "AbortError") showError("ask-error", String(err.message || err));
    for (const item of $("stages").children) if (item.className === "running") item.className = "failed";
  } finally {
    $("ask-button").disabled = false;
  }
}

function onEvent(name, data) {
  if (name === "error") throw new Error(data.error || "the server reported an error");
  if (name === "retrieved") {
    for (const c of data.candidates || []) state.texts[c.passage_id] = c;
    stageDone(name, `${(data.candidates || []).length} candidates, ${fmt(data.seconds, 1)} s`);
  } else if (name === "reranked") {
    state.table = data.candidates || [];
    state.trace = data.trace || null;
    const kept = state.table.filter((c) => c.kept).length;
    stageDone(name, `${kept} kept of ${state.table.length} by ${data.reranker}, ${fmt(data.seconds, 1)} s`);
  } else if (name === "evidence") {
    state.evidence = data.evidence || [];
    state.evidenceTrace = data.trace || null;
    const verdict = data.sufficient === false ? "insufficient" : "sufficient";
    stageDone(name, `${state.evidence.length} passages, ${verdict}, ${fmt(data.seconds, 1)} s`);
  } else if (name === "answer") {
    stageDone(name, data.insufficient ? "insufficient evidence" : "done");
    renderAnswer(data);
  }
}

function renderAnswer(answer) {
  const box = $("answer");
  box.replaceChildren();
  const parts = String(answer.text || "").split(/(\[\d+\])/);
  for (const part of parts) {
    const m = /^\[(\d+)\]$/.exec(part);
    if (m) box.append(el("a", { href: "#ev-" + m[1], class: "cite", text: part }));
    else if (part) box.append(document.createTextNode(part));
  }
  // the sources the answer rests on (a yes/no answer cites without [n] in its text)
  const cites = answer.citations || [];
  $("citations").hidden = !cites.length;
  $("citations").replaceChildren(
    cites.length ? "Cited: " : "",
    ...cites.flatMap((c, i) => [
      i ? "; " : "",
      el("a", { href: "#ev-" + c.marker, class: "cite", text: `[${c.marker}]` }),
      " " + (c.title || c.passage_id),
    ])
  );
  // the intent DeepEra's grader read, or the one its summaries were written for
  const intent = (state.trace && state.trace.intent) || (state.evidenceTrace && state.evidenceTrace.intent);
  $("intent").hidden = !intent;
  if (intent) {
    $("intent").textContent =
      `Recognised intent: ${intent.intent} (topic: ${intent.topic}; entity: ${intent.entity_type}; ` +
      `expected answer: ${intent.expected_answer_type})`;
  }
  const evidence = answer.evidence && answer.evidence.length ? answer.evidence : state.evidence;
  $("evidence").replaceChildren(
    ...evidence.map((e) => card(e.passage_id, {
      id: "ev-" + e.n, n: e.n, title: e.title, score: e.score, kept: true, summary: e.summary,
      rank: (state.table.find((c) => c.passage_id === e.passage_id) || {}).first_stage_rank,
    }))
  );
  if (!evidence.length) $("evidence").append(el("p", { class: "muted", text: "No passage was kept." }));
  const filtered = state.table.filter((c) => !c.kept);
  $("filtered-summary").textContent = `Filtered out (${filtered.length})`;
  $("filtered").replaceChildren(
    ...filtered.map((c) => card(c.passage_id, {
      title: c.title, score: c.score, kept: false, why: c.why, rank: c.first_stage_rank,
    }))
  );
  $("answer-box").hidden = false;
}

function card(passageId, info) {
  const source = state.texts[passageId] || {};
  const score = typeof info.score === "number" ? info.score : null;
  const head = el("header", {},
    info.n ? el("span", { class: "n", text: `[${info.n}]` }) : null,
    el("span", { class: "title", text: info.title || source.title || passageId }),
    el("span", { class: "pid", text: passageId }));
  const meter = el("div", { class: "score" },
    el("label", { for: "m-" + passageId, text: "P(relevant)" }),
    el("meter", { id: "m-" + passageId, min: 0, max: 1, value: score ?? 0 }),
    el("span", { text: score === null ? "n/a" : fmt(score) }));
  const status = el("p", { class: info.kept ? "status kept" : "status filtered" },
    info.kept ? "kept" : `filtered: ${info.why || "below the threshold"}`,
    info.rank ? ` · first-stage rank ${info.rank}` : "");
  const texts = el("div", { class: "texts" },
    info.summary ? el("div", {}, el("h4", { text: "Summary" }), el("p", { text: info.summary })) : null,
    el("div", {}, el("h4", { text: "Original text" }), el("p", { text: source.text || "" })));
  return el("article", { class: "card", id: info.id, tabindex: info.id ? -1 : null }, head, meter, status, texts);
}

// ---------------------------------------------------------------- experiments

async function getJSON(url) {
  const resp = await fetch(url, { headers: headers(false) });
  if (!resp.ok) throw new Error(await errorText(resp));
  return resp.json();
}

async function loadExperiments() {
  showError("exp-error", "");
  try {
    const body = await getJSON("v1/experiments");
    const items = Array.isArray(body) ? body : body.experiments || [];
    $("exp-list").replaceChildren(
      ...items.map((x) => {
        const b = el("button", { type: "button", text: x.name });
        b.addEventListener("click", () => showExperiment(x.name));
        return el("li", {}, b, x.dataset ? el("span", { class: "muted", text: " " + x.dataset }) : null);
      })
    );
    if (!items.length) $("exp-list").append(el("li", { class: "muted", text: "No experiment reports." }));
  } catch (err) {
    showError("exp-error", "experiments: " + err.message);
  }
}

async function showExperiment(name) {
  const box = $("exp-detail");
  box.replaceChildren(el("p", { class: "muted", text: "Loading…" }));
  try {
    const x = await getJSON("v1/experiments/" + encodeURIComponent(name));
    const table = x.table || {};
    const rows = table.rows || [];
    const metrics = [...new Set(rows.flatMap((r) => Object.keys(r.cells || {})))];
    const thead = el("thead", {}, el("tr", {},
      el("th", { scope: "col", text: "pipeline" }), el("th", { scope: "col", text: "setting" }),
      ...metrics.map((m) => el("th", { scope: "col", text: m }))));
    const tbody = el("tbody", {}, ...rows.map((r) => el("tr", {},
      el("th", { scope: "row", text: r.pipeline }), el("td", { text: r.setting || "" }),
      ...metrics.map((m) => el("td", { text: r.cells && r.cells[m] ? fmt(r.cells[m].mean, 4) : "" })))));
    // plot URLs come from the server (relative to this page, so a path prefix works)
    const plots = (x.plots || []).map((p) => el("figure", {},
      el("img", { src: String(p.url).replace(/^\//, ""), alt: `${name}: ${p.name}` }),
      el("figcaption", { text: p.name })));
    box.replaceChildren(
      el("h3", { text: name }),
      el("table", {}, el("caption", { text: `${name}${table.dataset ? " on " + table.dataset.name : ""}` }), thead, tbody),
      ...plots);
    if (x.plots && x.plots.length) await loadPlots(box);
  } catch (err) {
    box.replaceChildren(el("p", { class: "error", role: "alert", text: err.message }));
  }
}

// plots need the API key too: fetch them and show blobs instead of plain <img src>
async function loadPlots(box) {
  if (!sessionStorage.getItem("sciera-api-key")) return;
  for (const img of box.querySelectorAll("img")) {
    const resp = await fetch(img.getAttribute("src"), { headers: headers(false) });
    if (resp.ok) img.src = URL.createObjectURL(await resp.blob());
  }
}

// ---------------------------------------------------------------- SSLI

async function loadSSLIExperiments() {
  showError("ssli-error", "");
  try {
    const items = await getJSON("v1/experiments");
    const select = $("ssli-exp");
    const current = select.value;
    select.replaceChildren(el("option", { value: "", text: "choose an experiment" }),
      ...items.map((x) => el("option", { value: x.name, text: x.name })));
    if (current) select.value = current;
  } catch (err) {
    showError("ssli-error", "experiments: " + err.message);
  }
}

async function loadSSLIQuestions() {
  const name = $("ssli-exp").value;
  $("ssli-q").replaceChildren();
  $("ssli-detail").replaceChildren();
  showError("ssli-error", "");
  if (!name) return;
  try {
    const rows = await getJSON(`v1/experiments/${encodeURIComponent(name)}/ssli`);
    $("ssli-q").replaceChildren(el("option", { value: "", text: `${rows.length} questions: choose one` }),
      ...rows.map((r) => el("option", { value: r.id, text: `${r.question} (${r.distractors} distractors)` })));
  } catch (err) {
    showError("ssli-error", err.message);
  }
}

async function showSSLIQuestion() {
  const name = $("ssli-exp").value, qid = $("ssli-q").value;
  const box = $("ssli-detail");
  box.replaceChildren();
  if (!name || !qid) return;
  try {
    const q = await getJSON(`v1/experiments/${encodeURIComponent(name)}/ssli/${encodeURIComponent(qid)}`);
    const column = (p) => {
      const table = el("table", {},
        el("caption", { text: `score and rank among ${q.candidates} candidates` }),
        el("thead", {}, el("tr", {}, el("th", { scope: "col", text: "ranker" }),
          el("th", { scope: "col", text: "score" }), el("th", { scope: "col", text: "rank" }))),
        el("tbody", {}, ...q.pipelines.map((name) => {
          const s = p.scores[name] || {};
          return el("tr", { class: s.rank === 1 ? "top" : null }, el("th", { scope: "row", text: name }),
            el("td", { text: fmt(s.score, 4) }), el("td", { text: s.rank ?? "" }));
        })));
      const label = p.role === "gold" ? "Gold passage" : `Distractor (${p.distractor_type || "unlabelled"})`;
      return el("article", { class: "card " + p.role },
        el("header", {}, el("span", { class: "title", text: label }), el("span", { class: "pid", text: p.passage_id })),
        el("p", { text: p.text }), table);
    };
    box.replaceChildren(
      el("p", {}, el("strong", { text: "Question: " }), q.question),
      el("p", {}, el("strong", { text: "Answer: " }), q.answer),
      el("div", { class: "side" }, ...q.passages.map(column)));
  } catch (err) {
    box.replaceChildren(el("p", { class: "error", role: "alert", text: err.message }));
  }
}

// ---------------------------------------------------------------- start

window.addEventListener("DOMContentLoaded", () => {
  const key = $("api-key");
  key.value = sessionStorage.getItem("sciera-api-key") || "";
  key.addEventListener("change", () => {
    sessionStorage.setItem("sciera-api-key", key.value);
    loadCorpora();
  });
  $("ask-form").addEventListener("submit", ask);
  $("ssli-exp").addEventListener("change", loadSSLIQuestions);
  $("ssli-q").addEventListener("change", showSSLIQuestion);
  $("question").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) $("ask-form").requestSubmit();
  });
  window.addEventListener("hashchange", route);
  loadCorpora();
  route();
});
