// The lab's page: it shows the lab's state and follows its events. The
// state lives in the lab, not here: the page loads a snapshot (GET /state)
// and applies the numbered events that follow (GET /events), ignoring those
// the snapshot already holds; a gap in the numbers reloads the snapshot.
// So a reload restores everything, and every tab shows the same session.
//
// Every string from a model, a server or a scenario is put into the page
// as text (see el in form.js), never as markup.

import { el, renderForm } from "./form.js";

const $ = (id) => document.getElementById(id);

const page = {
  seq: 0,
  setup: null,
  loading: true,
  queued: [],
  items: new Map(), // item id -> element
  rows: new Map(), // call id -> row element
  calls: new Map(), // call id -> call
  logs: [],
  open: null, // the call id whose detail is open
  busy: false,
  forms: new Map(), // question item id -> form reader
  tools: new Map(), // offered tool name -> tool (the manual panel)
  loads: 0, // snapshots shown
};

// ---- figures, as internal/web formats them ----

function fmtMS(ms) {
  if (ms === undefined || ms === null) return "";
  if (ms < 10) return `${ms.toFixed(1)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(1)} s`;
}

// num writes a figure for the table, whose header carries the unit.
function num(ms) {
  if (ms === undefined || ms === null) return "";
  return ms < 10 ? ms.toFixed(1) : Math.round(ms).toLocaleString("en");
}

function fmtBytes(n) {
  if (n < 1000) return `${n} B`;
  if (n < 1e6) return `${(n / 1e3).toFixed(1)} kB`;
  return `${(n / 1e6).toFixed(1)} MB`;
}

// pretty shows JSON indented, and other text as it is.
function pretty(text) {
  if (typeof text !== "string") return JSON.stringify(text, null, 2);
  try { return JSON.stringify(JSON.parse(text), null, 2); } catch { return text; }
}

function badge(text, kind) {
  return el("span", { class: `badge ${kind || text}`, text });
}

// ---- talking to the lab ----

async function post(path, body) {
  const res = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body || {}) });
  let data = {};
  try { data = await res.json(); } catch { data = { error: `${res.status} ${res.statusText}` }; }
  return { ok: res.ok, status: res.status, data };
}

async function load() {
  page.loading = true;
  const res = await fetch("/state", { cache: "no-store" });
  const st = await res.json();
  page.seq = st.seq;
  page.setup = st.setup;
  page.items.clear();
  page.rows.clear();
  page.calls.clear();
  page.forms.clear();
  page.logs = [];
  $("items").replaceChildren();
  document.querySelector("#calls tbody").replaceChildren();
  $("logs").replaceChildren();
  showSetup(st.setup);
  for (const it of st.items) showItem(it);
  for (const c of st.calls) showCall(c);
  for (const l of st.logs) addLog(l);
  setBusy(st.busy);
  page.loading = false;
  const queued = page.queued;
  page.queued = [];
  for (const [name, ev] of queued) onEvent(name, ev);
  if (page.open && page.calls.has(page.open)) openCall(page.open);
  // Say that the page shows a snapshot: a script (the browser tests)
  // waits for this signal rather than for a time.
  page.loads++;
  document.documentElement.dataset.loads = String(page.loads);
  document.dispatchEvent(new Event("lab:loaded"));
}

function follow() {
  const es = new EventSource("/events");
  for (const name of ["item", "call", "log", "busy", "setup"]) {
    es.addEventListener(name, (e) => onEvent(name, JSON.parse(e.data)));
  }
  es.addEventListener("open", () => { $("connection").hidden = true; });
  es.addEventListener("error", () => {
    const c = $("connection");
    c.textContent = "Lost the connection to the lab; trying again…";
    c.hidden = false;
  });
}

function onEvent(name, ev) {
  if (page.loading) { page.queued.push([name, ev]); return; }
  if (ev.seq <= page.seq) return; // in the snapshot already
  if (ev.seq > page.seq + 1) { load(); return; } // missed some: start again
  page.seq = ev.seq;
  if (name === "item") showItem(ev.item);
  else if (name === "call") showCall(ev.call);
  else if (name === "log") addLog(ev.log);
  else if (name === "busy") setBusy(ev.busy);
  else if (name === "setup") { page.setup = ev.setup; showSetup(ev.setup); }
}

// ---- the session ----

function showSetup(s) {
  if (s.title) $("title").textContent = s.title;
  else $("title").textContent = s.manual ? "Manual panel" : `Chat with ${s.model}`;
  $("session").textContent = ` session ${s.session_id.slice(0, 8)}`;
  const servers = $("servers");
  servers.replaceChildren();
  const filter = $("filter-server");
  for (const o of [...filter.options].slice(2)) o.remove();
  for (const sv of s.servers || []) {
    const part = sv.error
      ? el("span", { class: "server fail" }, el("strong", { text: sv.server }), ` not available: ${sv.error}`)
      : el("span", { class: "server" }, el("strong", { text: sv.server }), ` ${sv.protocol} · ${sv.tools} tools`);
    servers.append(part);
    filter.append(el("option", { value: sv.server, text: sv.server }));
  }
  const limits = s.limits || {};
  servers.append(el("span", { class: "server muted" },
    `${s.tool_defs.tools} tools offered, ${fmtBytes(s.tool_defs.bytes)} per model request · max_steps ${limits.max_steps} · tool timeout ${limits.tool_timeout} · person timeout ${limits.person_timeout}`));
  if (s.manual) showTools(s.tools || []);
  else showSuggestions(s.suggestions || []);
}

function showSuggestions(list) {
  const box = $("suggestions");
  box.replaceChildren();
  for (const q of list) {
    const b = el("button", { type: "button", class: "suggestion", text: q });
    b.addEventListener("click", () => { $("question").value = q; $("question").focus(); });
    box.append(b);
  }
}

function setBusy(busy) {
  page.busy = busy;
  const send = $("send") || $("call");
  if (send) send.disabled = busy;
  $("stop").disabled = !busy;
  document.body.classList.toggle("busy", busy);
}

// ---- the conversation ----

function showItem(it) {
  const node = renderItem(it);
  node.dataset.id = it.id;
  node.dataset.kind = it.kind;
  const old = page.items.get(it.id);
  if (old) old.replaceWith(node);
  else $("items").append(node);
  page.items.set(it.id, node);
  if (it.kind === "question" && it.question.state === "pending") {
    // What waits for the person is in view and has the focus, however
    // long the conversation above it.
    node.scrollIntoView({ block: "center" });
    const first = node.querySelector("input, select, textarea, button.approve");
    if (first) first.focus({ preventScroll: true });
  } else if (!old) {
    node.scrollIntoView({ block: "nearest" });
  }
}

function renderItem(it) {
  switch (it.kind) {
    case "user":
      return el("div", { class: "turn user" }, el("div", { class: "who", text: "you" }), el("p", { class: "text", text: it.text }));
    case "answer":
      return el("div", { class: "turn model answer" }, el("div", { class: "who", text: it.stopped ? "assistant (stopped at max_steps)" : "assistant" }),
        el("p", { class: "text", text: it.text }));
    case "error":
      return el("div", { class: "turn host error" }, el("div", { class: "who", text: "host" }), el("p", { class: "text", text: it.text }));
    case "step":
      return renderStep(it);
    case "question":
      return it.question.kind === "approval" ? renderApproval(it) : renderElicitation(it);
    case "call":
      return el("div", { class: "turn user" }, el("div", { class: "who", text: "you call" }),
        el("p", {}, el("code", { text: it.name }), " ", el("code", { class: "args", text: it.arguments || "{}" })));
    case "result": {
      const node = el("div", { class: `turn server result ${it.outcome}` }, el("div", { class: "who" }, "result ", badge(it.outcome)),
        el("p", { class: "text sentence", text: it.text }));
      if (it.outcome === "ok") node.append(el("pre", { class: "result", text: pretty(it.result) }));
      return node;
    }
  }
  return el("div", { class: "step", text: it.text || it.kind });
}

function renderStep(it) {
  const node = el("div", { class: `step ${it.who}` }, el("span", { class: "who", text: it.who }), " ", el("span", { class: "text", text: it.text }));
  const data = it.data || {};
  if (data.arguments !== undefined) node.append(" ", el("code", { class: "args", text: typeof data.arguments === "string" ? data.arguments : JSON.stringify(data.arguments) }));
  if (data.url !== undefined) {
    node.classList.add("url-mode");
    node.append(el("div", { class: "muted" }, "The page it asked for: ", el("code", { text: String(data.url) }),
      ". The host never sends you to a page a server chose."));
  }
  return node;
}

function questionState(q) {
  const words = {
    approved: "You approved it: it ran.",
    denied: "You denied it: nothing was sent.",
    accept: "Accepted: your answer was sent.",
    decline: "Declined: the server was told no.",
    cancel: "Cancelled: the server was told you closed the form.",
  };
  const text = words[q.state] || (q.why ? `${q.why[0].toUpperCase()}${q.why.slice(1)}.` : q.state);
  const node = el("p", { class: `state ${q.state}` }, badge(q.state, q.state === "approved" || q.state === "accept" ? "ok" : "denied"), " ", text);
  if (q.content && Object.keys(q.content).length) node.append(" ", el("code", { class: "args", text: JSON.stringify(q.content) }));
  return node;
}

function renderApproval(it) {
  const q = it.question;
  const card = el("div", { class: `card approval ${q.state}` },
    el("h3", { text: "Run this call?" }),
    el("p", {}, el("strong", { text: q.server }), " wants to run ", el("code", { class: "tool", text: q.name }), `: ${q.effect}.`),
    el("pre", { class: "args", text: JSON.stringify(q.arguments || {}, null, 2) }));
  if (q.state !== "pending") {
    card.append(questionState(q));
    return card;
  }
  const problem = el("p", { class: "problem", role: "alert" });
  const approve = el("button", { type: "button", class: "primary approve", text: "Approve" });
  const deny = el("button", { type: "button", class: "danger deny", text: "Deny" });
  const send = async (action) => {
    approve.disabled = deny.disabled = true;
    const r = await post("/answer", { id: it.id, action });
    if (!r.ok) { problem.textContent = r.data.error || "The lab refused the answer."; approve.disabled = deny.disabled = false; }
  };
  approve.addEventListener("click", () => send("approve"));
  deny.addEventListener("click", () => send("deny"));
  card.append(el("p", { class: "muted", text: "Nothing is sent to the server until you press a button; anything but Approve is no." }),
    el("div", { class: "actions" }, approve, deny), problem);
  return card;
}

function renderElicitation(it) {
  const q = it.question;
  const card = el("div", { class: `card elicitation ${q.state}` },
    el("h3", {}, el("strong", { text: q.server }), " asks", q.tool ? el("span", { class: "muted", text: ` (during ${q.tool})` }) : null),
    el("p", { class: "message", text: q.message || "" }));
  if (q.mode === "url") {
    card.append(el("p", {}, "It asked you to open a web page: ", el("code", { text: q.url || "" }), ". The host declined it."));
  }
  if (q.state !== "pending") {
    card.append(questionState(q));
    return card;
  }
  const form = el("form", { class: "schema-form", novalidate: true });
  const fields = el("div", { class: "fields" });
  form.append(fields);
  const reader = renderForm(fields, q.schema || {}, `q${it.id}`);
  page.forms.set(it.id, reader);
  const problem = el("p", { class: "problem", role: "alert" });
  const accept = el("button", { type: "submit", class: "primary accept", text: "Accept" });
  const decline = el("button", { type: "button", class: "decline", text: "Decline" });
  const cancel = el("button", { type: "button", class: "cancel", text: "Cancel" });
  const buttons = [accept, decline, cancel];
  const send = async (action, content) => {
    problem.textContent = "";
    buttons.forEach((b) => { b.disabled = true; });
    const r = await post("/answer", { id: it.id, action, content });
    if (!r.ok) {
      problem.textContent = r.data.error || "The lab refused the answer.";
      reader.show(r.data.problems);
      buttons.forEach((b) => { b.disabled = false; });
    }
  };
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const { ok, values } = reader.read();
    if (ok) send("accept", values);
  });
  decline.addEventListener("click", () => send("decline"));
  cancel.addEventListener("click", () => send("cancel"));
  form.append(el("p", { class: "muted", text: "Nothing is sent to the server until you press a button. Decline says no; Cancel says you closed the form." }),
    el("div", { class: "actions" }, ...buttons), problem);
  card.append(form);
  return card;
}

// ---- the side panel ----

function showCall(c) {
  page.calls.set(c.id, c);
  const cells = [
    el("td", { class: "num", text: c.step }),
    el("td", { class: "tool" }, toolName(c.name)),
    el("td", { class: "arg-keys", text: (c.arg_keys || []).join(", ") }),
    el("td", { class: "outcome" }, badge(c.outcome)),
    el("td", { class: "asked", text: c.asked_user ? "yes" : "no" }),
    el("td", { class: "approval", text: c.approval || "" }),
    el("td", { class: "num", text: c.rounds }),
    el("td", { class: "num", text: num(c.ms) }),
    el("td", { class: "num", text: num(c.server_ms) }),
    el("td", { class: "num", text: c.person_ms ? num(c.person_ms) : "" }),
    el("td", { class: "num", text: c.result_bytes.toLocaleString("en") }),
    el("td", { class: "clipped", text: c.clipped ? "yes" : "" }),
  ];
  const row = el("tr", { tabindex: "0", "data-id": c.id, "data-outcome": c.outcome, "data-asked": String(c.asked_user) }, ...cells);
  row.addEventListener("click", () => openCall(c.id));
  row.addEventListener("keydown", (e) => { if (e.key === "Enter") openCall(c.id); });
  const old = page.rows.get(c.id);
  if (old) old.replaceWith(row);
  else document.querySelector("#calls tbody").append(row);
  page.rows.set(c.id, row);
  $("no-calls").hidden = true;
  $("call-count").textContent = `(${page.rows.size})`;
}

// toolName shows server__tool so that a narrow column breaks it after
// the server's name.
function toolName(name) {
  const code = el("code");
  const at = name.indexOf("__");
  if (at < 0) code.textContent = name;
  else code.append(name.slice(0, at + 2), el("wbr"), name.slice(at + 2));
  return code;
}

function figure(label, value) {
  return el("div", { class: "card" }, el("div", { class: "label", text: label }), el("div", { class: "value", text: value }));
}

async function openCall(id) {
  page.open = id;
  for (const [rid, row] of page.rows) row.classList.toggle("open", rid === id);
  const res = await fetch(`/calls/${encodeURIComponent(id)}`, { cache: "no-store" });
  if (!res.ok || page.open !== id) return;
  const d = await res.json();
  const c = d.call;
  const box = $("detail");
  const close = el("button", { type: "button", class: "close", text: "Close" });
  close.addEventListener("click", () => { box.hidden = true; page.open = null; for (const row of page.rows.values()) row.classList.remove("open"); });
  const logs = el("button", { type: "button", text: "Show its logs" });
  logs.addEventListener("click", () => { $("filter-trace").value = c.trace_id; $("filter-step").value = String(c.step); filterLogs(); });
  const result = c.result || "";
  const cut = c.result_bytes > new TextEncoder().encode(result).length;
  box.replaceChildren(
    el("div", { class: "detail-head" }, el("h3", {}, `step ${c.step} · `, el("code", { text: c.name }), " ", badge(c.outcome)), logs, close),
    el("p", { class: "sentence", text: c.sentence }),
    el("div", { class: "cards" },
      figure("ms", fmtMS(c.ms)), figure("server", fmtMS(c.server_ms)), figure("person", fmtMS(c.person_ms || 0)),
      figure("rounds", String(c.rounds)), figure("result", fmtBytes(c.result_bytes)), figure("asked the person", c.asked_user ? "yes" : "no")),
    el("p", { class: "muted mono", text: `trace_id ${c.trace_id} · step ${c.step} · ${c.server} · ${c.protocol || ""} · approval ${c.approval || "none"}${c.round_ms ? ` · rounds ${c.round_ms.map(fmtMS).join(", ")}` : ""}` }),
    el("h4", { text: "Arguments" }),
    el("pre", { class: "args", text: c.arguments ? JSON.stringify(c.arguments, null, 2) : "(nothing was sent)" }),
    el("h4", { text: cut ? `Result as the model saw it (its first ${fmtBytes(result.length)} of ${fmtBytes(c.result_bytes)})` : "Result as the model saw it" }),
    el("pre", { class: "result", text: pretty(result) }),
    el("h4", { text: c.server === "-" ? "Server records" : `Records of ${c.server} for this call (trace_id + step)` }),
    d.server_lines.length
      ? el("ol", { class: "logs server-lines" }, ...d.server_lines.map(logItem))
      : el("p", { class: "empty", text: c.rounds ? "None yet." : "None: nothing reached a server." }),
    el("h4", { text: "Wire messages" }),
    d.wire.length ? wireList(d.wire) : el("p", { class: "empty", text: "None." }),
  );
  box.hidden = false;
}

function wireList(messages) {
  const list = el("ol", { class: "wire" });
  for (const m of messages) {
    const summary = el("summary", {}, el("span", { class: `dir ${m.dir === "->" ? "out" : "in"}`, text: m.dir === "->" ? "→ to" : "← from" }),
      ` ${m.server} `, el("strong", { text: m.method || "" }), ` ${m.kind} · ${fmtBytes(m.bytes)} · at ${fmtMS(m.ms)}`);
    list.append(el("li", {}, el("details", {}, summary, el("pre", { text: pretty(m.message || "") }))));
  }
  return list;
}

// ---- the logs ----

// The fields a log row shows, in this order, when its record has them;
// the rest are in its JSON.
const logFields = ["method", "tool", "outcome", "error_code", "error", "decision", "ms", "protocol", "msg", "level"];

// logTime is a record's time as hh:mm:ss.mmm, or "".
function logTime(rec) {
  const ts = rec.ts || rec.time;
  if (typeof ts !== "string") return "";
  const m = ts.match(/T(\d\d:\d\d:\d\d(?:\.\d{1,3})?)/);
  return m ? m[1] : "";
}

function logItem(l) {
  const who = l.source === "host" ? "host" : l.server || "server";
  let rec = null;
  try { rec = JSON.parse(l.text); } catch { rec = null; }
  if (rec === null || typeof rec !== "object" || Array.isArray(rec)) rec = null;
  const fields = el("span", { class: "fields" });
  if (rec) {
    for (const k of logFields) {
      const v = rec[k];
      if (v === undefined || v === null || v === "" || (k === "error_code" && v === 0)) continue;
      const bad = (k === "outcome" && v !== "ok") || k === "error" || k === "error_code";
      fields.append(el("span", { class: "k", text: `${k} ` }), el("span", { class: bad ? "v bad" : "v", text: typeof v === "string" ? v : JSON.stringify(v) }));
    }
  } else {
    fields.append(el("span", { class: "v", text: l.text }));
  }
  const node = el("li", { class: `log ${l.source}`, "data-trace": l.trace_id || "", "data-step": String(l.step || ""), "data-server": l.source === "host" ? "host" : l.server || "" },
    el("span", { class: "time", text: rec ? logTime(rec) : "" }),
    el("span", { class: "src", text: who }),
    el("span", { class: "op", text: l.operation || "" }),
    l.trace_id ? el("span", { class: "trace muted", text: l.step ? `${l.trace_id.slice(0, 8)}·${l.step}` : l.trace_id.slice(0, 8) }) : null,
    fields,
    el("pre", { class: "json", text: rec ? JSON.stringify(rec, null, 2) : l.text }));
  node.title = "Click for the whole record";
  node.addEventListener("click", (e) => {
    if (e.target.closest("pre.json") && window.getSelection().toString()) return; // selecting text in it
    node.classList.toggle("expanded");
  });
  return node;
}

function addLog(l) {
  page.logs.push(l);
  const node = logItem(l);
  node.hidden = !matches(node);
  const list = $("logs");
  list.append(node);
  // The lab keeps the last 5000; so does the page.
  while (list.children.length > 5000) list.firstChild.remove();
  $("log-count").textContent = `(${list.children.length})`;
}

function matches(node) {
  const trace = $("filter-trace").value.trim();
  const step = $("filter-step").value.trim();
  const server = $("filter-server").value;
  if (trace && !node.dataset.trace.startsWith(trace)) return false;
  if (step && node.dataset.step !== step) return false;
  if (server && node.dataset.server !== server) return false;
  return true;
}

function filterLogs() {
  for (const node of $("logs").children) node.hidden = !matches(node);
}

// ---- the composer ----

function showTools(tools) {
  const select = $("tool");
  const was = page.tools.get(select.value);
  select.replaceChildren();
  const offered = tools.filter((t) => t.offered);
  for (const t of offered) select.append(el("option", { value: t.name, text: `${t.name}${t.auto_run ? "" : " (asks you first)"}` }));
  page.tools = new Map(offered.map((t) => [t.name, t]));
  // A snapshot loaded again (a gap in the events, a reconnection) keeps
  // the person's choice and what they typed, while the tool is the same.
  const now = was && page.tools.get(was.name);
  if (now) {
    select.value = now.name;
    if (JSON.stringify(now.input_schema) === JSON.stringify(was.input_schema)) return;
  }
  chooseTool();
}

let toolForm = null;
let raw = false;

function chooseTool() {
  const t = page.tools.get($("tool").value);
  $("tool-description").textContent = t ? t.description : "No tool is offered.";
  toolForm = renderForm($("tool-form"), t ? t.input_schema : {}, "arg");
  setRaw(false);
}

function setRaw(on) {
  if (on && toolForm) {
    // The fields as they stand, unchecked: raw JSON is for what the form
    // cannot say, and the host checks whatever is sent.
    $("tool-json").value = JSON.stringify(toolForm.read(false).values, null, 2);
  } else if (!on && raw) {
    try { toolForm.fill(JSON.parse($("tool-json").value)); } catch { /* keep the fields as they were */ }
  }
  raw = on;
  $("tool-raw").hidden = !on;
  $("tool-form").hidden = on;
  $("raw-toggle").setAttribute("aria-pressed", String(on));
  $("raw-toggle").textContent = on ? "Form" : "Raw JSON";
}

function setupComposer() {
  const ask = $("ask");
  if (ask) {
    ask.addEventListener("submit", async (e) => {
      e.preventDefault();
      const q = $("question").value.trim();
      if (!q) return;
      $("composer-error").textContent = "";
      const r = await post("/ask", { question: q });
      if (r.ok) $("question").value = "";
      else $("composer-error").textContent = r.data.error;
    });
    $("question").addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); ask.requestSubmit(); }
    });
  }
  const manual = $("manual");
  if (manual) {
    $("tool").addEventListener("change", chooseTool);
    $("raw-toggle").addEventListener("click", () => setRaw(!raw));
    manual.addEventListener("submit", async (e) => {
      e.preventDefault();
      $("composer-error").textContent = "";
      let args;
      if (raw) {
        args = $("tool-json").value; // sent as typed: the host checks it
      } else {
        const { ok, values } = toolForm.read();
        if (!ok) return;
        args = JSON.stringify(values);
      }
      const r = await post("/call", { name: $("tool").value, arguments: args });
      if (!r.ok) $("composer-error").textContent = r.data.error;
    });
  }
  $("stop").addEventListener("click", () => post("/stop", {}));
  for (const id of ["filter-trace", "filter-step", "filter-server"]) $(id).addEventListener("input", filterLogs);
  $("filter-clear").addEventListener("click", () => { $("log-filters").reset(); filterLogs(); });
}

setupComposer();
follow();
load();
