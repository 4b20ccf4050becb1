// Keyhive console: polls /api/state and redraws. Read-only; every text
// from the server goes in through textContent, never as markup.
"use strict";

const POLL_MS = 3000;

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k.startsWith("data-")) e.setAttribute(k, v);
    else e[k] = v;
  }
  for (const c of children) e.append(c instanceof Node ? c : String(c));
  return e;
}

function human(n) {
  const units = ["B", "KB", "MB", "GB", "TB"];
  let i = 0;
  while (Math.abs(n) >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (i ? n.toFixed(1) : String(n)) + units[i];
}

function bar(value, total, cls) {
  const w = total > 0 ? Math.max(0, Math.min(100, 100 * value / total)) : 0;
  const b = el("div", { class: "bar" + (cls ? " " + cls : ""), title: human(value) });
  b.style.width = w + "%";
  return b;
}

function fill(tbody, rows) {
  tbody.replaceChildren(...rows);
}

function renderNamespaces(list) {
  const body = document.querySelector("#namespaces tbody");
  const total = list.reduce((s, n) => s + n.figures.bytes, 0);
  fill(body, list.map(n => {
    const f = n.figures;
    return el("tr", { "data-ns": n.name, "data-keys": f.keys, "data-volatile": f.volatile, "data-bytes": f.bytes },
      el("td", {}, n.name), el("td", { class: "text" }, n.match || "(the rest)"),
      el("td", { class: "keys" }, f.keys), el("td", { class: "volatile" }, f.volatile), el("td", { class: "bytes" }, f.bytes),
      el("td", {}, bar(f.bytes, total)),
      el("td", {}, f.hits), el("td", {}, f.misses), el("td", {}, f.writes), el("td", {}, f.evictions),
      el("td", {}, f.expirations), el("td", {}, f.refused),
      el("td", { class: "text" }, n.policy || "—"));
  }));
  if (!list.length) fill(body, [el("tr", {}, el("td", { colSpan: 13, class: "muted" }, "No namespace declared (NAMESPACE DEFINE or PROMOTE)."))]);
}

function renderPrefixes(disc) {
  const box = document.getElementById("prefixes");
  if (!disc) {
    box.replaceChildren(el("p", { class: "muted" }, "Discovery is off (CONFIG SET namespace-discovery yes)."));
    return;
  }
  box.replaceChildren(...disc.depths.map((level, i) => {
    const total = level.reduce((s, p) => s + p.figures.bytes, 0);
    const table = el("table", { "data-depth": i + 1 },
      el("thead", {}, el("tr", {}, el("th", {}, "prefix"), el("th", {}, "keys"), el("th", {}, "with TTL"),
        el("th", {}, "bytes"), el("th", { class: "bar-col" }, "memory"), el("th", { class: "bar-col" }, "keys with TTL"),
        el("th", {}, "reads"), el("th", {}, "writes"))),
      el("tbody", {}, ...level.map(p => el("tr", { "data-prefix": p.name, "data-depth": p.depth, "data-keys": p.figures.keys, "data-volatile": p.figures.volatile, "data-bytes": p.figures.bytes },
        el("td", { class: "text" }, p.name),
        el("td", { class: "keys" }, p.figures.keys), el("td", { class: "volatile" }, p.figures.volatile),
        el("td", { class: "bytes", title: "± " + p.error.bytes }, p.figures.bytes),
        el("td", {}, bar(p.figures.bytes, total)),
        el("td", {}, bar(p.figures.volatile, p.figures.keys, "ttl")),
        el("td", {}, p.figures.reads), el("td", {}, p.figures.writes)))));
    return el("div", {}, el("h3", {}, "Depth " + (i + 1)), level.length ? table : el("p", { class: "muted" }, "No prefix seen yet."));
  }));
}

function renderHotKeys(hk, hidden) {
  const note = document.getElementById("hotkeys-note");
  const box = document.getElementById("hotkeys");
  if (!hk) {
    note.textContent = "No HOTKEYS session (HOTKEYS START METRICS 2 CPU NET).";
    box.replaceChildren();
    return;
  }
  note.textContent = (hk.active ? "Tracking." : "Last session.") + (hidden ? " " + hidden + " key name(s) hidden by your ACL." : "");
  const table = (title, unit, keys) => {
    const max = keys.length ? keys[0].count : 0;
    return el("div", {}, el("h3", {}, title),
      el("table", {}, el("thead", {}, el("tr", {}, el("th", {}, "key"), el("th", {}, unit), el("th", { class: "bar-col" }, ""))),
        el("tbody", {}, ...keys.map(k => el("tr", { "data-hotkey": k.key },
          el("td", { class: "text" }, k.key), el("td", {}, k.count), el("td", {}, bar(k.count, max)))))));
  };
  const parts = [];
  if (hk.by_cpu_us) parts.push(table("By CPU time", "µs", hk.by_cpu_us));
  if (hk.by_net_bytes) parts.push(table("By network bytes", "bytes", hk.by_net_bytes));
  box.replaceChildren(...parts);
}

function renderCommands(cmds) {
  const body = document.querySelector("#commands tbody");
  const total = cmds.reduce((s, c) => s + Number(c.fields.usec || 0), 0);
  cmds.sort((a, b) => Number(b.fields.usec || 0) - Number(a.fields.usec || 0));
  fill(body, cmds.filter(c => c.fields.calls).map(c => el("tr", { "data-command": c.name },
    el("td", {}, c.name), el("td", {}, c.fields.calls), el("td", {}, c.fields.usec_per_call || ""),
    el("td", {}, bar(Number(c.fields.usec || 0), total)),
    el("td", {}, c.fields["p50"] || ""), el("td", {}, c.fields["p99"] || ""), el("td", {}, c.fields["p99.9"] || ""),
    el("td", {}, c.fields.failed_calls || "0"))));
}

// printable shows an argument's control bytes as \xHH and cuts it at 80
// characters: slow log arguments are binary as often as not.
function printable(arg) {
  const s = arg.replace(/[\x00-\x1f\x7f]/g, c => "\\x" + c.charCodeAt(0).toString(16).padStart(2, "0"));
  return s.length > 80 ? s.slice(0, 80) + "…" : s;
}

function renderSlowLog(entries) {
  const body = document.querySelector("#slowlog tbody");
  fill(body, entries.map(e => el("tr", { "data-slowlog": e.id },
    el("td", {}, e.id), el("td", {}, new Date(e.unix * 1000).toLocaleTimeString()), el("td", {}, e.micros),
    el("td", { class: "args" }, e.args.map(printable).join(" "), e.hidden ? el("span", { class: "hidden" }, " (arguments hidden by your ACL)") : ""),
    el("td", { class: "text" }, e.client + (e.client_name ? " " + e.client_name : "")))));
}

function renderRole(role) {
  const r = role.replication || {};
  const dl = document.getElementById("role");
  const items = [["role", r.role], ["cluster", role.cluster ? "enabled" : "disabled"]];
  if (r.master_host) items.push(["master", r.master_host + ":" + r.master_port + " (" + r.master_link_status + ")"]);
  for (const [k, v] of Object.entries(r)) if (/^slave\d+$/.test(k)) items.push([k.replace("slave", "replica "), v]);
  items.push(["replication offset", r.master_repl_offset]);
  dl.replaceChildren(...items.flatMap(([k, v]) => [el("dt", {}, k), el("dd", { "data-role": k }, v === undefined ? "" : v)]));
  document.getElementById("nodes").textContent = role.cluster ? role.nodes.join("\n") : "";
}

async function poll() {
  const status = document.getElementById("status");
  try {
    const res = await fetch("api/state", { cache: "no-store", credentials: "same-origin" });
    if (!res.ok) throw new Error(res.status + " " + res.statusText);
    const s = await res.json();
    const m = s.memory || {}, srv = s.server || {};
    document.getElementById("summary").textContent =
      "version " + (srv.keyhive_version || srv.redis_version || "?") + " · port " + srv.tcp_port +
      " · memory " + (m.used_memory_human || "") + (Number(m.maxmemory) ? " of " + m.maxmemory_human : "") +
      " · " + (m.maxmemory_policy || "") + " · up " + srv.uptime_in_seconds + "s";
    renderNamespaces(s.namespaces || []);
    renderPrefixes(s.discovery);
    renderHotKeys(s.hotkeys, s.hidden_keys);
    renderCommands(s.commands || []);
    renderSlowLog(s.slowlog || []);
    renderRole(s.role || {});
    status.textContent = "updated " + new Date().toLocaleTimeString();
    document.body.setAttribute("data-loaded", "1");
  } catch (err) {
    status.textContent = "update failed: " + err.message;
  }
  setTimeout(poll, POLL_MS);
}

poll();
