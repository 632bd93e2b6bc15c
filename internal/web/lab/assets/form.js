// Forms generated from a JSON Schema: a server's requestedSchema (MCP's
// flat, primitive properties) or a tool's inputSchema. Every string from
// the schema reaches the page as text (textContent, attribute values),
// never as markup.
//
// The checks here are the page's: the browser's own (required, bounds,
// email and URL) and the ones it has no attribute for or counts otherwise
// (lengths, pattern, date-time, how many choices, JSON). The lab checks the answer again,
// and so does the host (host.CheckAnswer), before anything is sent.

// el makes an element: attrs are attribute values (text sets its text),
// children are nodes or strings (added as text).
export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "text") e.textContent = String(v);
    else if (k === "class") e.className = v;
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children) {
    if (c !== null && c !== undefined && c !== false) e.append(c);
  }
  return e;
}

// choicesOf returns a field's choices, as host.Choices does: an enum
// (with enumNames), oneOf/anyOf titled consts, or an array's items'.
export function choicesOf(spec) {
  if (!spec || typeof spec !== "object") return [];
  if (spec.type === "array") return choicesOf(spec.items);
  if (Array.isArray(spec.enum)) {
    const names = Array.isArray(spec.enumNames) ? spec.enumNames : [];
    return spec.enum.map((v, i) => ({ value: v, title: typeof names[i] === "string" && names[i] ? names[i] : String(v) }));
  }
  for (const key of ["oneOf", "anyOf"]) {
    if (!Array.isArray(spec[key])) continue;
    const out = spec[key]
      .filter((a) => a && typeof a === "object" && "const" in a)
      .map((a) => ({ value: a.const, title: typeof a.title === "string" && a.title ? a.title : String(a.const) }));
    if (out.length) return out;
  }
  return [];
}

// fieldsOf lists a schema's properties: required ones first, then by name,
// as the host and the terminal order them.
export function fieldsOf(schema) {
  const props = schema && typeof schema.properties === "object" && schema.properties ? schema.properties : {};
  const required = new Set(Array.isArray(schema && schema.required) ? schema.required : []);
  return Object.keys(props)
    .map((name) => ({ name, spec: props[name] && typeof props[name] === "object" ? props[name] : {}, required: required.has(name) }))
    .sort((a, b) => (a.required === b.required ? (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) : a.required ? -1 : 1));
}

const rfc3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

// renderForm fills container with one field per property of schema and
// returns how to read and check it: read() gives {ok, values} after the
// checks (the browser shows what is wrong; read(false) skips them),
// show(problems) puts the lab's or the host's problems next to their
// fields, fill(values) sets them.
export function renderForm(container, schema, prefix) {
  container.replaceChildren();
  const widgets = [];
  for (const f of fieldsOf(schema)) {
    const w = widget(f, `${prefix}-${widgets.length}`);
    const label = el("label", { for: w.id, class: "field-name" }, f.spec.title || f.name);
    if (f.required) label.append(el("span", { class: "required", title: "required", text: " *" }));
    const wrap = el("div", { class: "field", "data-field": f.name }, label);
    if (f.spec.title && f.spec.title !== f.name) wrap.append(el("code", { class: "muted field-key", text: f.name }));
    wrap.append(w.node);
    const hint = describe(f.spec);
    if (f.spec.description || hint) {
      wrap.append(el("small", { class: "muted field-help" }, [f.spec.description, hint].filter(Boolean).join(" · ")));
    }
    const problem = el("small", { class: "problem", role: "alert" });
    wrap.append(problem);
    container.append(wrap);
    widgets.push({ ...w, name: f.name, problem });
  }
  if (!widgets.length) container.append(el("p", { class: "muted", text: "No fields: nothing to fill in." }));

  return {
    read(check = true) {
      const values = {};
      let ok = true;
      for (const w of widgets) {
        const r = w.read();
        if (r.set) values[w.name] = r.value;
        if (!check) continue;
        w.problem.textContent = "";
        w.input.setCustomValidity(r.problem || "");
        if (r.problem) ok = false;
      }
      const form = container.closest("form");
      if (check && form && !form.reportValidity()) ok = false;
      return { ok, values };
    },
    show(problems) {
      for (const p of problems || []) {
        const w = widgets.find((w) => w.name === p.field);
        if (w) w.problem.textContent = p.message;
      }
    },
    // fill sets the fields from an object (switching from raw JSON back).
    fill(values) {
      for (const w of widgets) if (values && w.name in values) w.fill(values[w.name]);
    },
  };
}

// describe says in a few words what a field accepts beyond its type.
function describe(spec) {
  const parts = [];
  if (spec.format) parts.push(spec.format);
  if (spec.minLength !== undefined) parts.push(`at least ${spec.minLength} characters`);
  if (spec.maxLength !== undefined) parts.push(`at most ${spec.maxLength} characters`);
  if (spec.pattern) parts.push(`pattern ${spec.pattern}`);
  if (spec.minimum !== undefined) parts.push(`≥ ${spec.minimum}`);
  if (spec.maximum !== undefined) parts.push(`≤ ${spec.maximum}`);
  if (spec.minItems !== undefined) parts.push(`choose at least ${spec.minItems}`);
  if (spec.maxItems !== undefined) parts.push(`choose at most ${spec.maxItems}`);
  return parts.join(", ");
}

// widget makes the input for one field.
function widget(f, id) {
  const { spec, required } = f;
  const choices = choicesOf(spec);
  const has = (v) => v !== undefined && v !== null;
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

  if (spec.type === "array" && choices.length) {
    const node = el("fieldset", { id, class: "multi", name: f.name });
    const boxes = choices.map((c, i) => {
      const box = el("input", { type: "checkbox", id: `${id}-${i}`, value: String(i) });
      if (Array.isArray(spec.default) && spec.default.some((d) => same(d, c.value))) box.checked = true;
      node.append(el("label", { for: `${id}-${i}`, class: "choice" }, box, " ", c.title));
      return box;
    });
    return {
      id: `${id}-0`, node, input: boxes[0] || node,
      read() {
        const value = choices.filter((_, i) => boxes[i].checked).map((c) => c.value);
        let problem = "";
        if (has(spec.minItems) && value.length < spec.minItems) problem = `Choose at least ${spec.minItems}.`;
        else if (has(spec.maxItems) && value.length > spec.maxItems) problem = `Choose at most ${spec.maxItems}.`;
        else if (required && !value.length) problem = "Choose at least one.";
        return { set: value.length > 0 || required, value, problem };
      },
      fill(v) { boxes.forEach((b, i) => { b.checked = Array.isArray(v) && v.some((x) => same(x, choices[i].value)); }); },
    };
  }
  if (choices.length) {
    const input = el("select", { id, name: f.name, required });
    const blank = el("option", { value: "", text: required ? "Choose…" : "(none)" });
    if (required) blank.disabled = true;
    input.append(blank);
    choices.forEach((c, i) => input.append(el("option", { value: String(i), text: c.title })));
    const at = has(spec.default) ? choices.findIndex((c) => same(c.value, spec.default)) : -1;
    input.value = at >= 0 ? String(at) : "";
    return {
      id, node: input, input,
      read() { return input.value === "" ? { set: false } : { set: true, value: choices[Number(input.value)].value }; },
      fill(v) { const i = choices.findIndex((c) => same(c.value, v)); input.value = i >= 0 ? String(i) : ""; },
    };
  }
  if (spec.type === "boolean") {
    const input = el("input", { id, name: f.name, type: "checkbox" });
    input.checked = spec.default === true;
    return {
      id, node: el("span", { class: "check" }, input), input,
      read() { return { set: true, value: input.checked }; },
      fill(v) { input.checked = v === true; },
    };
  }
  if (spec.type === "number" || spec.type === "integer") {
    const input = el("input", { id, name: f.name, type: "number", required, min: spec.minimum, max: spec.maximum,
      step: spec.type === "integer" ? "1" : "any" });
    if (has(spec.default)) input.value = String(spec.default);
    return {
      id, node: input, input,
      read() {
        if (input.value === "") return { set: false };
        const n = Number(input.value);
        if (Number.isNaN(n)) return { set: false, problem: "Type a number." };
        if (spec.type === "integer" && !Number.isInteger(n)) return { set: false, problem: "Type a whole number." };
        return { set: true, value: n };
      },
      fill(v) { input.value = typeof v === "number" ? String(v) : ""; },
    };
  }
  if (spec.type === "string" || (!spec.type && !spec.properties && !spec.items)) {
    const type = { email: "email", uri: "url", date: "date" }[spec.format] || "text";
    // Long text (a summary, a description) gets room; a name, a line.
    const long = !spec.format && spec.maxLength >= 500;
    const input = long
      ? el("textarea", { id, name: f.name, rows: 2, required })
      : el("input", { id, name: f.name, type, required,
          placeholder: spec.format === "date-time" ? "2026-07-28T09:30:00Z" : undefined });
    // A JSON Schema pattern matches anywhere in the text, as the host's
    // check does; the HTML pattern attribute would anchor it.
    if (typeof spec.pattern === "string" && spec.pattern) input.dataset.pattern = spec.pattern;
    if (has(spec.default)) input.value = String(spec.default);
    return {
      id, node: input, input,
      read() {
        const v = input.value;
        if (v === "") return { set: false };
        // Lengths in characters, as the host counts them; the browser's
        // own checks count UTF-16 units, and only what was typed.
        const n = [...v].length;
        if (has(spec.minLength) && n < spec.minLength) return { set: true, value: v, problem: `Type at least ${spec.minLength} characters.` };
        if (has(spec.maxLength) && n > spec.maxLength) return { set: true, value: v, problem: `Type at most ${spec.maxLength} characters.` };
        if (spec.format === "date-time" && !rfc3339.test(v)) return { set: true, value: v, problem: "Type a date and time, e.g. 2026-07-28T09:30:00Z." };
        if (input.dataset.pattern) {
          try {
            if (!new RegExp(input.dataset.pattern, "u").test(v)) {
              return { set: true, value: v, problem: `Match the pattern ${input.dataset.pattern}.` };
            }
          } catch { /* a pattern JavaScript cannot read is left to the lab and the host */ }
        }
        return { set: true, value: v };
      },
      fill(v) { input.value = typeof v === "string" ? v : ""; },
    };
  }
  // An object, an array of anything: JSON, as a tool's input schema may ask.
  const input = el("textarea", { id, name: f.name, rows: 3, required, class: "json", placeholder: spec.type === "array" ? "[ ]" : "{ }" });
  if (has(spec.default)) input.value = JSON.stringify(spec.default);
  return {
    id, node: input, input,
    read() {
      if (input.value.trim() === "") return { set: false };
      try { return { set: true, value: JSON.parse(input.value) }; } catch { return { set: false, problem: "Type JSON here." }; }
    },
    fill(v) { input.value = v === undefined ? "" : JSON.stringify(v); },
  };
}
