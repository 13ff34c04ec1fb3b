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

// replaceChildren() writes a null child as the text "null": leave out the absent ones
function setChildren(node, ...children) {
  node.replaceChildren(...children.filter((c) => c !== null && c !== undefined));
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

const VIEWS = ["ask", "verify", "experiments", "ssli"];

// The hash names a view, or an element inside one (a citation's card): that view shows.
function route() {
  const wanted = location.hash.slice(1);
  let view = VIEWS.includes(wanted) ? wanted : null;
  if (!view) {
    const target = wanted ? document.getElementById(wanted) : null;
    const section = target ? target.closest("main > section") : null;
    view = section ? section.id.replace(/^view-/, "") : "ask";
  }
  for (const name of VIEWS) $("view-" + name).hidden = view !== name;
  for (const name of VIEWS) {
    const link = $("nav-" + name);
    if (name === view) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  if (view === "experiments" && wanted === "experiments") loadExperiments();
  if (view === "ssli" && wanted === "ssli") loadSSLIExperiments();
}

// ---------------------------------------------------------------- shared: corpora, stages, streams

async function loadCorpora() {
  const selects = [$("corpus"), $("verify-corpus")];
  try {
    const resp = await fetch("v1/corpora", { headers: headers(false) });
    if (!resp.ok) throw new Error(await errorText(resp));
    const body = await resp.json();
    const corpora = Array.isArray(body) ? body : body.corpora || [];
    for (const select of selects) {
      const current = select.value;
      select.replaceChildren(...corpora.map((c) => el("option", { value: c.name, text: c.name })));
      if (current && corpora.some((c) => c.name === current)) select.value = current;
    }
  } catch (err) {
    showError("ask-error", "corpora: " + (err.message || err));
    showError("verify-error", "corpora: " + (err.message || err));
  }
}

function stageItem(prefix, name, label, className) {
  return el("li", { id: prefix + name, class: className },
    el("span", { text: label }), el("span", { class: "detail" }));
}

function resetStages(list, prefix, stages) {
  $(list).replaceChildren(...stages.map(([name, label]) => stageItem(prefix, name, label, "pending")));
  $(list).firstChild.className = "running";
}

function stageDone(prefix, name, detail) {
  const item = $(prefix + name);
  if (!item) return;
  item.className = "done";
  item.querySelector(".detail").textContent = detail;
  const next = item.nextElementSibling;
  if (next && next.className === "pending") next.className = "running";
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

const controllers = {};

// POST `body` to `url` as a stream; each event goes to `onEvent`; a failed request, an
// `error` event or a broken stream shows on the view's error line and fails its stage.
async function streamView(view, url, body, onEvent) {
  const { button, error, stages } = view;
  if (controllers[url]) controllers[url].abort();
  const controller = (controllers[url] = new AbortController());
  $(button).disabled = true;
  try {
    const resp = await fetch(url, {
      method: "POST",
      headers: { ...headers(), Accept: "text/event-stream" },
      body: JSON.stringify({ ...body, stream: true }),
      signal: controller.signal,
    });
    if (!resp.ok) throw new Error(await errorText(resp));
    for await (const [name, data] of sseEvents(resp)) {
      if (name === "error") throw new Error(data.error || "the server reported an error");
      onEvent(name, data);
    }
  } catch (err) {
    if (err.name === "AbortError") return;
    showError(error, String(err.message || err));
    for (const item of $(stages).children) if (item.className === "running") item.className = "failed";
  } finally {
    if (controllers[url] === controller) {
      $(button).disabled = false;
      delete controllers[url];
    }
  }
}

// ---------------------------------------------------------------- verdicts and sentences

const LABEL_CLASS = {
  SUPPORT: "support", CONTRADICT: "contradict", "NOT ENOUGH INFO": "nei", CONFLICTING: "conflicting",
};
const LABEL_MEANING = {
  SUPPORT: "The abstracts that decide support the claim.",
  CONTRADICT: "The abstracts that decide contradict the claim.",
  CONFLICTING: "The abstracts that decide disagree: some support the claim, some contradict it.",
  "NOT ENOUGH INFO": "No abstract read decides whether the claim holds.",
};

function badge(label, extra) {
  return el("span", { class: "badge " + (LABEL_CLASS[label] || "nei"), text: label + (extra || "") });
}

// "supported by A, B; contradicted by C": each abstract as `link(docId)` gives it (a link to
// its card, or its name when no card shows it).
function sides(v, link) {
  const out = [];
  const list = (ids) => ids.flatMap((id, i) => [i ? ", " : "", link(id)]);
  if ((v.supporting || []).length) out.push("supported by ", ...list(v.supporting));
  if ((v.contradicting || []).length) {
    if (out.length) out.push("; ");
    out.push("contradicted by ", ...list(v.contradicting));
  }
  return out;
}

// The rationale sentences, verbatim and quoted, each with its index in the abstract.
// With `idPrefix` each sentence is a link target (a citation names its sentences).
// `heading` names them otherwise (an abstract decided NOT ENOUGH INFO shows its closest).
function rationaleList(rationales, idPrefix, heading = "Rationale sentences (verbatim)") {
  return el("div", { class: "rationales" },
    el("h4", { text: heading }),
    el("ul", {}, ...rationales.map((r) => el("li",
      { id: idPrefix ? `${idPrefix}-s${r.index}` : null, tabindex: idPrefix ? -1 : null },
      el("span", { class: "sent-n", text: `sentence ${r.index}` }), " ",
      el("q", { text: r.text }),
      typeof r.score === "number" ? el("span", { class: "muted", text: ` P(rationale) ${fmt(r.score, 2)}` }) : null))));
}

// The heading of an undecided abstract's sentences (undefined: they are its rationales).
function closestHeading(verdict) {
  return verdict && verdict.label === "NOT ENOUGH INFO"
    ? "Closest sentences (verbatim; evidence for neither side)" : undefined;
}

// `text` with each of `sentences` found in it marked (text nodes only: never markup).
function marked(text, sentences) {
  const spans = [];
  for (const s of sentences) {
    const at = s ? text.indexOf(s) : -1;
    if (at >= 0 && !spans.some(([a, b]) => at < b && at + s.length > a)) spans.push([at, at + s.length]);
  }
  spans.sort((x, y) => x[0] - y[0]);
  const out = [];
  let from = 0;
  for (const [a, b] of spans) {
    if (a > from) out.push(text.slice(from, a));
    out.push(el("mark", { text: text.slice(a, b) }));
    from = b;
  }
  if (from < text.length) out.push(text.slice(from));
  return out;
}

// ---------------------------------------------------------------- ask

const ASK_STAGES = [
  ["retrieved", "Retrieve candidates"],
  ["reranked", "Rerank and filter"],
  ["evidence", "Extract evidence"],
  ["answer", "Write the answer"],
];

let state = null;

async function ask(event) {
  event.preventDefault();
  const question = $("question").value.trim();
  if (!question) return showError("ask-error", "Write a question first.");
  showError("ask-error", "");
  $("answer-box").hidden = true;
  resetStages("stages", "stage-", ASK_STAGES);
  state = { texts: {}, table: [], trace: null, filter: null, evidenceTrace: null, evidence: [], verification: null };
  await streamView({ button: "ask-button", error: "ask-error", stages: "stages" }, "v1/ask",
    { question, corpus: $("corpus").value || undefined }, onAskEvent);
}

function onAskEvent(name, data) {
  if (name === "retrieved") {
    for (const c of data.candidates || []) state.texts[c.passage_id] = c;
    stageDone("stage-", name, `${(data.candidates || []).length} candidates, ${fmt(data.seconds, 1)} s`);
  } else if (name === "reranked") {
    state.table = data.candidates || [];
    state.trace = data.trace || null;
    state.filter = data.filter || null;
    const kept = state.table.filter((c) => c.kept).length;
    stageDone("stage-", name, `${kept} kept of ${state.table.length} by ${data.reranker}, ${fmt(data.seconds, 1)} s`);
  } else if (name === "verified") {
    // only claims and yes/no questions are verified: the stage shows when it ran
    state.verification = data;
    if (!$("stage-verified")) $("stage-reranked").after(stageItem("stage-", "verified", "Verify", "pending"));
    const n = (data.abstracts || []).length;
    stageDone("stage-", name, `${data.label} over ${n} abstract${n === 1 ? "" : "s"}, ${fmt(data.seconds, 1)} s`);
  } else if (name === "evidence") {
    state.evidence = data.evidence || [];
    state.evidenceTrace = data.trace || null;
    const verdict = data.extractor === "quoted" ? "rationale sentences quoted"
      : data.sufficient === false ? "insufficient" : "sufficient";
    const n = state.evidence.length;
    stageDone("stage-", name, `${n} passage${n === 1 ? "" : "s"}, ${verdict}, ${fmt(data.seconds, 1)} s`);
  } else if (name === "answer") {
    stageDone("stage-", name, data.insufficient ? "insufficient evidence" : "done");
    renderAnswer(data);
  }
}

const docOf = (e) =>
  ((e.rationales || [])[0] || {}).doc_id || (state.texts[e.passage_id] || {}).doc_id || String(e.passage_id).split("#")[0];

function renderAnswer(answer) {
  const box = $("answer");
  box.replaceChildren();
  const parts = String(answer.text || "").split(/(\[\d+\])/);
  for (const part of parts) {
    const m = /^\[(\d+)\]$/.exec(part);
    if (m) box.append(el("a", { href: "#ev-" + m[1], class: "cite", text: part }));
    else if (part) box.append(document.createTextNode(part));
  }
  const evidence = answer.evidence && answer.evidence.length ? answer.evidence : state.evidence;
  renderVerdict(answer, evidence);
  // the sources the answer rests on (a yes/no answer cites without [n] in its text), and
  // the sentences of each that the verdict read
  const cites = answer.citations || [];
  $("citations").hidden = !cites.length;
  $("citations").replaceChildren(
    cites.length ? "Cited: " : "",
    ...cites.flatMap((c, i) => [
      i ? "; " : "",
      el("a", { href: "#ev-" + c.marker, class: "cite", text: `[${c.marker}${c.section ? ", " + c.section : ""}]` }),
      " " + (c.title || c.passage_id),
      ...((c.sentences || []).length
        ? [" (", ...c.sentences.flatMap((s, j) => [j ? ", " : "",
            el("a", { href: `#ev-${c.marker}-s${s}`, text: `sentence ${s}` })]), ")"]
        : []),
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
  const verdicts = {};
  for (const a of (state.verification || {}).abstracts || []) verdicts[a.doc_id] = a;
  // a factoid or list answer read from the closest passages when nothing was kept
  const closest = Boolean(answer.trace && answer.trace.closest);
  const seen = new Set();
  const evidenceCard = (e) => {
    const doc = docOf(e);
    const first = !seen.has(doc);
    seen.add(doc);
    const row = state.table.find((c) => c.passage_id === e.passage_id) || {};
    return card(e.passage_id, {
      id: "ev-" + e.n, n: e.n, title: e.title, section: e.section, score: e.score, kept: e.kept !== false,
      cited: e.kept === false && !closest, closest: e.kept === false && closest,
      why: row.why, summary: e.summary, rank: row.first_stage_rank, rationales: e.rationales || [],
      verdict: first ? verdicts[doc] : null,
    });
  };
  const kept = evidence.filter((e) => e.kept !== false);
  const below = evidence.filter((e) => e.kept === false);
  $("evidence").replaceChildren(...kept.map(evidenceCard));
  if (!kept.length) $("evidence").append(el("p", { class: "muted", text: "No passage was kept." }));
  $("below").replaceChildren(...below.map(evidenceCard));
  $("below-box").hidden = !below.length;
  // "below the threshold" when their scores are under tau; else the filter's top_k cut them
  const tau = state.filter && typeof state.filter.tau === "number" ? state.filter.tau : null;
  const underTau = tau !== null && below.every((e) => typeof e.score === "number" && e.score < tau);
  const why = closest ? "the closest passages" : "cited for their sentences";
  $("below-title").textContent = underTau
    ? `Below the threshold (τ ${fmt(tau, 2)}), ${why}`
    : `Not kept by the filter, ${why}`;
  $("below-note").textContent = closest
    ? "No passage reached the threshold, so the answer keeps only what these closest " +
      "passages state word for word. Check it against them."
    : "The filter did not keep these passages as evidence, but the verifier read sentences in " +
      "their abstracts that bear on the claim, so the answer cites them.";
  const shown = new Set(below.map((e) => e.passage_id));
  const filtered = state.table.filter((c) => !c.kept && !shown.has(c.passage_id));
  $("filtered-summary").textContent = `Filtered out (${filtered.length})`;
  $("filtered").replaceChildren(
    ...filtered.map((c) => {
      const doc = (state.texts[c.passage_id] || {}).doc_id;
      const verdict = doc && !seen.has(doc) ? verdicts[doc] : null;
      if (doc) seen.add(doc);
      return card(c.passage_id, {
        title: c.title, score: c.score, kept: false, why: c.why, rank: c.first_stage_rank, verdict,
      });
    })
  );
  $("answer-box").hidden = false;
}

// The verdict line under the answer: the label, its confidence, which abstracts support
// and which contradict (each linked to its evidence card when the answer cites it).
function renderVerdict(answer, evidence) {
  const trace = answer.trace || {};
  const v = trace.verification || state.verification;
  const line = $("verdict");
  line.hidden = !v;
  if (!v) return line.replaceChildren();
  const titles = {};
  for (const a of (state.verification || {}).abstracts || []) titles[a.doc_id] = a.title;
  const link = (doc) => {
    const e = evidence.find((x) => docOf(x) === doc);
    const name = titles[doc] || doc;
    return e ? el("a", { href: "#ev-" + e.n, text: `[${e.n}] ${name}` }) : `${name} (${doc})`;
  };
  const by = sides(v, link);
  setChildren(line,
    el("span", { class: "verdict-head", text: "Verdict: " }),
    badge(v.label),
    ` confidence ${fmt(v.confidence, 2)}`,
    ...(by.length ? [" · ", ...by] : []),
    trace.decided_by ? el("span", { class: "muted", text: ` · decided by the ${trace.decided_by}` }) : null
  );
}

function card(passageId, info) {
  const source = state.texts[passageId] || {};
  const score = typeof info.score === "number" ? info.score : null;
  const head = el("header", {},
    info.n ? el("span", { class: "n", text: `[${info.n}]` }) : null,
    el("span", { class: "title", text: info.title || source.title || passageId }),
    // a full-text paper's passage names its section (abstracts have none)
    (info.section || source.section) ? el("span", { class: "section", text: info.section || source.section }) : null,
    el("span", { class: "pid", text: passageId }));
  const meter = el("div", { class: "score" },
    el("label", { for: "m-" + passageId, text: "P(relevant)" }),
    el("meter", { id: "m-" + passageId, min: 0, max: 1, value: score ?? 0 }),
    el("span", { text: score === null ? "n/a" : fmt(score) }));
  let fate;
  if (info.kept) fate = "kept";
  else if (info.cited) fate = `not kept (${info.why || "below the threshold"}): cited for its sentences`;
  else if (info.closest) fate = `not kept (${info.why || "below the threshold"}): one of the closest passages read`;
  else fate = `filtered: ${info.why || "below the threshold"}`;
  const status = el("p", { class: info.kept ? "status kept" : "status filtered" },
    fate, info.rank ? ` · first-stage rank ${info.rank}` : "",
    info.verdict ? " · verifier: " : "",
    info.verdict ? badge(info.verdict.label, ` ${fmt(info.verdict.confidence, 2)}`) : null);
  const rationales = info.rationales || [];
  const texts = el("div", { class: "texts" },
    info.summary ? el("div", {}, el("h4", { text: "Summary" }), el("p", { text: info.summary })) : null,
    el("div", {}, el("h4", { text: "Original text" }),
      el("p", {}, ...marked(source.text || "", rationales.map((r) => r.text)))));
  const box = el("div", { class: "context", hidden: true });
  const doc = source.doc_id || String(passageId).split("#")[0];
  const open = el("button", { type: "button", class: "link context-open", text: "Read in context" });
  open.addEventListener("click", () => showContext(box, open, doc, passageId));
  return el("article", { class: "card", id: info.id, tabindex: info.id ? -1 : null }, head, meter, status,
    rationales.length ? rationaleList(rationales, info.id, closestHeading(info.verdict)) : null,
    texts, open, box);
}

// The paper a passage comes from, passage by passage under its section headings, the
// passage itself marked and scrolled to (GET /v1/corpora/{name}/documents/{doc_id}).
async function showContext(box, button, doc, passageId) {
  if (!box.hidden) {
    box.hidden = true;
    button.textContent = "Read in context";
    return;
  }
  const corpus = $("corpus").value;
  button.disabled = true;
  try {
    const url = `v1/corpora/${encodeURIComponent(corpus)}/documents/${encodeURIComponent(doc)}`;
    const resp = await fetch(url, { headers: headers(false) });
    if (!resp.ok) throw new Error(await errorText(resp));
    const data = await resp.json();
    let heading = null;
    const items = [el("p", { class: "muted", text: `${data.title} · ${data.passages.length} passages` })];
    for (const p of data.passages) {
      const where = [p.section, p.subsection].filter(Boolean).join(" › ");
      if (where && where !== heading) items.push(el("h5", { text: where }));
      heading = where || heading;
      items.push(el("p", { class: p.passage_id === passageId ? "here" : null, id: `ctx-${passageId}-${p.index}`,
        text: (p.kind && p.kind !== "text" ? `[${p.kind}] ` : "") + p.text }));
    }
    box.replaceChildren(...items);
    box.hidden = false;
    button.textContent = "Hide the context";
    const here = box.querySelector(".here");
    if (here) here.scrollIntoView({ block: "center" });
  } catch (err) {
    box.replaceChildren(el("p", { class: "error", text: `Could not open the paper: ${err.message}` }));
    box.hidden = false;
  } finally {
    button.disabled = false;
  }
}

// ---------------------------------------------------------------- verify

const VERIFY_STAGES = [
  ["retrieved", "Retrieve candidates"],
  ["reranked", "Rerank"],
  ["verified", "Verify"],
];

let vstate = null;

async function verifyClaim(event) {
  event.preventDefault();
  const claim = $("claim").value.trim();
  if (!claim) return showError("verify-error", "Write a claim first.");
  showError("verify-error", "");
  $("verify-box").hidden = true;
  resetStages("verify-stages", "vstage-", VERIFY_STAGES);
  vstate = { texts: {}, table: [] };
  await streamView({ button: "verify-button", error: "verify-error", stages: "verify-stages" }, "v1/verify",
    { claim, corpus: $("verify-corpus").value || undefined }, onVerifyEvent);
}

function onVerifyEvent(name, data) {
  if (name === "retrieved") {
    for (const c of data.candidates || []) vstate.texts[c.passage_id] = c;
    stageDone("vstage-", name, `${(data.candidates || []).length} candidates, ${fmt(data.seconds, 1)} s`);
  } else if (name === "reranked") {
    vstate.table = data.candidates || [];
    stageDone("vstage-", name, `${vstate.table.length} passages by ${data.reranker}, ${fmt(data.seconds, 1)} s`);
  } else if (name === "verified") {
    const n = (data.abstracts || []).length;
    stageDone("vstage-", name, `${n} abstract${n === 1 ? "" : "s"}, ${fmt(data.seconds, 1)} s`);
    renderVerification(data);
  }
}

function renderVerification(v) {
  const abstracts = v.abstracts || [];
  const link = (doc) => {
    const i = abstracts.findIndex((a) => a.doc_id === doc);
    return i >= 0 ? el("a", { href: `#va-${i + 1}`, text: abstracts[i].title || doc }) : doc;
  };
  const by = sides(v, link);
  setChildren($("verify-verdict"),
    el("p", { class: "overall-head" }, badge(v.label), ` confidence ${fmt(v.confidence, 2)}`),
    el("p", { text: LABEL_MEANING[v.label] || "" }),
    by.length ? el("p", {}, by[0].replace(/^s/, "S"), ...by.slice(1), ".") : null);
  $("verify-cards").replaceChildren(...abstracts.map(abstractCard));
  if (!abstracts.length) $("verify-cards").append(el("p", { class: "muted", text: "No abstract was retrieved." }));
  $("verify-box").hidden = false;
}

// One abstract's verdict: label, confidence, the rationale sentences quoted with their
// indices, its title, and the retrieved passages with those sentences marked.
function abstractCard(a, i) {
  const id = `va-${i + 1}`;
  const probs = a.probs || {};
  const passages = Object.values(vstate.texts).filter((c) => c.doc_id === a.doc_id);
  const best = vstate.table.find((c) => passages.some((p) => p.passage_id === c.passage_id));
  const rationales = a.rationales || [];
  return el("article", { class: "card verdict-card " + (LABEL_CLASS[a.label] || "nei"), id, tabindex: -1 },
    el("header", {},
      el("span", { class: "n", text: `${i + 1}.` }),
      badge(a.label),
      el("span", { class: "title", text: a.title || a.doc_id }),
      el("span", { class: "pid", text: a.doc_id })),
    el("div", { class: "score" },
      el("label", { for: "vm-" + (i + 1), text: "confidence" }),
      el("meter", { id: "vm-" + (i + 1), min: 0, max: 1, value: a.confidence ?? 0 }),
      el("span", { text: fmt(a.confidence, 2) })),
    a.read === false
      ? el("p", { class: "muted probs", text: a.relevance === null || a.relevance === undefined
        ? "Not read by the verdict model: no sentence was selected."
        : "Not read by the verdict model: its P(relevant) is below the relevance gate." })
      : el("p", { class: "muted probs", text: Object.entries(probs).map(([k, p]) => `P(${k}) ${fmt(p, 2)}`).join(" · ") }),
    best ? el("p", { class: "muted rank", text: `P(relevant) ${fmt(best.score)} · first-stage rank ${best.first_stage_rank}` }) : null,
    rationales.length ? rationaleList(rationales, null, closestHeading(a))
      : el("p", { class: "muted", text: "No sentence of this abstract was selected as a rationale." }),
    passages.length ? el("details", {}, el("summary", { text: passages.length > 1 ? "Passages read" : "Passage read" }),
      ...passages.map((p) => el("p", {}, ...marked(p.text || "", rationales.map((r) => r.text))))) : null);
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
  $("verify-form").addEventListener("submit", verifyClaim);
  $("ssli-exp").addEventListener("change", loadSSLIQuestions);
  $("ssli-q").addEventListener("change", showSSLIQuestion);
  for (const [box, form] of [["question", "ask-form"], ["claim", "verify-form"]]) {
    $(box).addEventListener("keydown", (e) => {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) $(form).requestSubmit();
    });
  }
  window.addEventListener("hashchange", route);
  loadCorpora();
  route();
});
