// contractlang view: the page. Every text from the data goes into the page as text (text nodes, attributes set
// one by one), never as HTML, so an agent's or a model's words cannot become markup.
"use strict";

const PAGE = 50;
const SVG = "http://www.w3.org/2000/svg";
const state = { index: null, rows: [], version: -1, page: 0, filters: {} };

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "onclick" || k === "oninput" || k === "onchange") node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  append(node, children);
  return node;
}
function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  append(node, children);
  return node;
}
function append(node, children) {
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}
// the token the server wrote into this page: it builds a game (which may rebuild it) only for a request that
// carries it; a bundle's page has none and needs none
const TOKEN = (document.querySelector('meta[name="contractlang-token"]') || {}).content;
async function getJSON(name) {
  const response = await fetch("data/" + name, { cache: "no-store", headers: TOKEN ? { "X-Contractlang-Token": TOKEN } : {} });
  if (!response.ok) throw new Error(name + ": " + response.status);
  return response.json();
}
const money = (v) => (v === null || v === undefined ? "" : (v < 0 ? "−$" : "$") + Math.abs(Number(v)).toLocaleString("en-US"));
const triple = (t) => (t ? t.join("/") : "");
const money2 = (v) => (v < 0 ? "−$" : "$") + Math.abs(v).toFixed(2);
const signed = (v) => (v < 0 ? "−$" : "+$") + Math.abs(v).toFixed(2);
const fmt = (v, d = 1) => (v === null || v === undefined ? "–" : Number(v).toFixed(d));

// --- the index, its chunks of game rows, and live updates --------------------------------------------------

async function loadIndex() {
  // rows only grow while the version stays: then only the chunks from the first incomplete one are fetched
  const index = await getJSON("index.json");
  const reload = index.version !== state.version;
  const grown = reload ? 0 : Math.floor(state.rows.length / index.chunk);
  const changed = reload ? "reload" : index.games !== state.rows.length || index.reading !== (state.index && state.index.reading) ? "grew" : null;
  state.index = index;
  document.getElementById("root").textContent = index.root;
  document.getElementById("live").textContent = index.reading ? "reading the files…" : !index.live ? "snapshot" :
    index.writing ? "live: a run is writing these files" : "served: read again if the files change";
  if (reload || index.games !== state.rows.length) {
    state.version = index.version;
    const rows = state.rows.slice(0, grown * index.chunk);
    for (let k = grown; k < Math.ceil(index.games / index.chunk); k++) rows.push(...(await getJSON("list/" + k + ".json")));
    state.rows = rows;
  }
  return changed;
}

// --- overview: tables, figures, the game list and the comparison ---------------------------------------------

function markdownBlock(text) {
  // the tables.md files: headings, pipe tables, paragraphs; each cell as text
  const out = el("div", { class: "mdtable" });
  const lines = text.split("\n");
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (line.startsWith("|")) {
      const table = el("table");
      let header = true;
      while (i < lines.length && lines[i].startsWith("|")) {
        const cells = lines[i].replace(/^\||\|$/g, "").split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, "|"));
        if (!cells.every((c) => /^:?-+:?$/.test(c))) {
          const tr = el("tr", { class: cells.some((c) => c.endsWith("(paper)")) ? "paper" : null });
          cells.forEach((c) => tr.appendChild(el(header ? "th" : "td", {}, c)));
          table.appendChild(tr);
          header = false;
        }
        i++;
      }
      out.appendChild(table);
      continue;
    }
    if (line.startsWith("#")) out.appendChild(el("h3", {}, line.replace(/^#+\s*/, "")));
    else if (line.trim()) out.appendChild(el("p", { class: "meta" }, line));
    i++;
  }
  return out;
}

function cellText(v) {
  if (v === null || v === undefined) return "–";
  if (typeof v === "object" && "mean" in v) return v.mean === null ? "–" : fmt(v.mean, 2) + (v.half_width === null || v.half_width === undefined ? "" : " ± " + fmt(v.half_width, 2));
  return typeof v === "object" ? JSON.stringify(v) : String(v);
}

function rowsTable(rows) {
  // a sweep's summary rows: the scalar fields, then each metric cell as mean ± half-width
  const flat = rows.map((r) => { const { cells, ...rest } = r; return { ...rest, ...(cells || {}) }; });
  const keys = [...new Set(flat.flatMap((r) => Object.keys(r)))];
  return el("table", {}, el("tr", {}, ...keys.map((k) => el("th", {}, k))),
    ...flat.map((r) => el("tr", {}, ...keys.map((k) => el("td", {}, cellText(r[k]))))));
}

function tableSection(table, open = true) {
  return el("details", { open: open }, el("summary", {}, table.path),
    table.rows.length ? el("div", { class: "mdtable" }, rowsTable(table.rows)) : markdownBlock(table.text));
}

function reportSection(source) {
  // the CT-Bench paper's tables over a sweep's games, the paper's rows beside ours (`ctbench report --paper`)
  const body = el("pre", { class: "text report", "data-source": source.path }, "Computing the report…");
  getJSON("report/" + source.index + ".json").then((r) => {
    body.textContent = r.error ? "No report: " + r.error : r.text;
  }).catch((e) => { body.textContent = "No report: " + e.message; });
  return el("details", { open: true, class: "report" },
    el("summary", {}, source.path + " — the paper's tables, its rows beside these games (ctbench report --paper)"), body);
}

// --- a tournament's leaderboard (tournament.json, docs/explanation/tournaments.md) -------------------------------

const RATED = [["utility", "utility"], ["optimum_regret", "regret against the optimum"], ["compliant_regret", "compliant regret (field)"], ["regret", "regret (field)"], ["strength", "Bradley–Terry strength"]];

function intervalText(iv) {
  return !iv || iv.mean === null ? "–" : fmt(iv.mean, 2) + " [" + fmt(iv.low, 2) + ", " + fmt(iv.high, 2) + "]";
}

function span(ivs) {
  // the common scale of a column's bars: every interval, and zero, in view
  const ends = ivs.filter((iv) => iv && iv.mean !== null).flatMap((iv) => [iv.low, iv.high]);
  const lo = Math.min(0, ...ends), hi = Math.max(0, ...ends);
  return [lo, hi > lo ? hi : lo + 1];
}

function intervalBar(iv, [lo, hi]) {
  // the mean as a dot on its interval, zero as a grey tick
  const W = 140, H = 14, x = (v) => 4 + ((v - lo) * (W - 8)) / (hi - lo);
  const node = svg("svg", { class: "bar", width: W, height: H, viewBox: "0 0 " + W + " " + H });
  node.appendChild(svg("line", { x1: x(0), x2: x(0), y1: 0, y2: H, stroke: "#bbb" }));
  if (iv && iv.mean !== null) {
    node.appendChild(svg("line", { class: "interval", x1: x(iv.low), x2: x(iv.high), y1: H / 2, y2: H / 2, stroke: "#1565c0", "stroke-width": 3 }));
    node.appendChild(svg("circle", { cx: x(iv.mean), cy: H / 2, r: 3.5, fill: "#0d47a1" }));
  }
  return node;
}

function ratingsTable(report, role) {
  const rows = report.ratings.filter((r) => r.role === role);
  const scales = Object.fromEntries(RATED.map(([k]) => [k, span(rows.map((r) => r[k]))]));
  return el("table", { class: "ratings", "data-role": role },
    el("tr", {}, el("th", {}, "rank"), el("th", {}, "agent"), ...RATED.map(([, name]) => el("th", {}, name + " [95 % CI]")), el("th", {}, "tied with")),
    ...rows.map((r) => el("tr", { "data-agent": r.agent }, el("td", { class: "num" }, r.rank), el("td", {}, r.agent),
      ...RATED.map(([k]) => el("td", { class: "num", "data-q": k }, intervalText(r[k]), el("br"), intervalBar(r[k], scales[k]))),
      el("td", {}, (r.tied_with || []).join(", ") || "–"))));
}

function heatmap(report, role) {
  // the agent × opponent matrix of mean utility in this role: darker is more; a gated cell is grey
  const cells = report.cells.filter((c) => c.role === role);
  const agents = [...new Set(cells.map((c) => c.agent))], opponents = [...new Set(cells.map((c) => c.opponent))];
  const values = cells.map((c) => c.utility.mean).filter((v) => v !== null);
  const lo = Math.min(...values), hi = Math.max(...values);
  const L = 130, T = 22, CW = 84, CH = 26;
  const W = L + CW * opponents.length + 4, H = T + CH * agents.length + 4;
  const node = svg("svg", { class: "heatmap", "data-role": role, width: W, height: H, viewBox: "0 0 " + W + " " + H });
  opponents.forEach((o, j) => node.appendChild(svg("text", { x: L + j * CW + CW / 2, y: 14, "text-anchor": "middle" }, o)));
  agents.forEach((a, i) => {
    node.appendChild(svg("text", { x: L - 6, y: T + i * CH + CH / 2 + 4, "text-anchor": "end" }, a));
    opponents.forEach((o, j) => {
      const c = cells.find((x) => x.agent === a && x.opponent === o);
      if (!c) return;
      const v = c.utility.mean, t = v === null || hi === lo ? 0.5 : (v - lo) / (hi - lo);
      const fill = c.gated ? "#bdbdbd" : "hsl(210, 70%, " + (92 - 50 * t).toFixed(1) + "%)";
      const rect = svg("rect", { class: "cell", x: L + j * CW, y: T + i * CH, width: CW - 2, height: CH - 2, fill, "data-agent": a, "data-opponent": o },
        svg("title", {}, a + " against " + o + ": utility " + intervalText(c.utility) + ", compliant regret " + intervalText(c.compliant_regret) + " over " + c.games + " game(s)" + (c.gated ? "; gated: " + c.gated : "")));
      node.appendChild(rect);
      node.appendChild(svg("text", { x: L + j * CW + CW / 2 - 1, y: T + i * CH + CH / 2 + 3, "text-anchor": "middle", fill: t > 0.6 ? "#fff" : "#222" }, fmt(v, 1)));
    });
  });
  return node;
}

function leaderboardSection(table) {
  // a report written by hand or by another version may lack what the leaderboard draws: it says so, the page stays
  try { return leaderboard(table); } catch (e) {
    return el("p", { class: "error" }, table.path + ": not drawn as a leaderboard: " + e.message);
  }
}

function leaderboard(table) {
  const r = table.leaderboard;
  const roles = r.roles || [...new Set(r.ratings.map((x) => x.role))];
  return el("section", { class: "leaderboard", "data-path": table.path },
    el("h3", {}, table.path + " — " + r.game + " tournament"),
    el("p", { class: "meta provenance" }, "contractlang " + (r.version || "(version not recorded)") + " · seeds " + (r.seeds || []).join(", ") +
      " · " + r.units + " unit(s), " + r.games + " game(s)" + (r.sequential ? " · " + r.sequential : "")),
    el("p", { class: "meta specs" }, "agents: " + (r.specs && r.specs.length ? r.specs : r.agents).join(", ")),
    ...roles.flatMap((role) => [el("h3", {}, role),
      el("div", { class: "cols" }, el("div", {}, ratingsTable(r, role)),
        el("div", {}, el("p", { class: "meta" }, "mean utility, agent (row) against opponent (column)"), heatmap(r, role)))]),
    (r.gates || []).length ? el("ul", { class: "gates" }, ...r.gates.map((g) => el("li", {}, "gated: " + g.role + " " + g.agent + " against " + g.opponent + ": " + g.reason))) : null);
}

const COLUMNS = [
  ["contract", "Contract"], ["where", "Env / board"], ["variant", "Mode / setting"], ["role", "Role"], ["agent", "Agent"],
  ["counterparty", "Counterparty"], ["seed", "Seed"], ["outcome", "Outcome"], ["first_breach", "First breach"],
];

function filtered() {
  const f = state.filters;
  return state.rows.filter((r) => Object.entries(f).every(([k, v]) => !v || String(r[k] ?? "") === v));
}

function select(key, label, values) {
  const s = el("select", { "data-filter": key, onchange: (e) => { state.filters[key] = e.target.value; state.page = 0; renderList(); } },
    el("option", { value: "" }, "all"));
  for (const v of values) s.appendChild(el("option", { value: v, selected: state.filters[key] === v }, v));
  return el("label", {}, label, s);
}

function distinct(key) {
  return [...new Set(state.rows.map((r) => (r[key] === null || r[key] === undefined ? "" : String(r[key]))))].filter((v) => v !== "").sort();
}

function renderOverview() {
  const main = document.getElementById("main");
  const idx = state.index;
  const boards = idx.tables.filter((t) => t.leaderboard);
  const parts = boards.length ? [el("h2", { id: "leaderboard-heading" }, "Leaderboard"), ...boards.map(leaderboardSection)] : [];
  parts.push(el("h2", { id: "games-heading" }, "Games"));
  parts.push(el("p", { class: "meta" }, idx.sources.map((s) => s.path + ": " + s.games.toLocaleString("en-US") + " " + s.kind + " game(s)" +
    (s.rows !== s.games ? " (each listed once per role)" : "")).join(" · ")));
  if (idx.problems.length) parts.push(el("details", { id: "problems" },
    el("summary", { class: "error" }, (idx.problems.length + idx.more_problems).toLocaleString("en-US") + " file(s) or record(s) not shown"),
    el("ul", {}, ...idx.problems.map((p) => el("li", {}, p)), idx.more_problems ? el("li", {}, "and " + idx.more_problems + " more") : null)));
  const filters = el("div", { class: "filters", id: "filters" },
    select("contract", "contract", idx.contracts), select("where", "env / board", idx.wheres),
    select("role", "role", distinct("role")), select("agent", "agent", idx.agents),
    select("counterparty", "counterparty", distinct("counterparty")), select("outcome", "outcome", distinct("outcome")),
    select("first_breach", "breached first", distinct("first_breach")));
  parts.push(filters, el("div", { id: "list" }));
  if (idx.agents.length > 1) {
    const a = el("select", { id: "cmp-a" }, ...idx.agents.map((v) => el("option", { value: v }, v)));
    const b = el("select", { id: "cmp-b" }, ...idx.agents.map((v, k) => el("option", { value: v, selected: k === 1 }, v)));
    parts.push(el("h2", {}, "Compare two agents"),
      el("div", { class: "filters" }, el("label", {}, "agent A", a), el("label", {}, "agent B", b),
        el("button", { id: "compare", onclick: () => { location.hash = "#/compare/" + encodeURIComponent(a.value) + "/" + encodeURIComponent(b.value); } }, "Compare")));
  }
  const reports = idx.sources.filter((s) => s.kind === "ctbench-report");
  const tables = idx.tables.filter((t) => !t.leaderboard);
  if (tables.length || reports.length) parts.push(el("h2", {}, "Tables"), ...reports.map(reportSection),
    // a sweep's summary.json is what its report is computed from: kept, closed, under the report
    ...tables.map((t) => tableSection(t, !(reports.length && t.path.endsWith("summary.json")))));
  if (idx.figures.length) parts.push(el("h2", {}, "Figures"), el("div", { class: "figures" },
    ...idx.figures.map((f, k) => el("figure", {}, el("img", { src: "files/" + k + ".png", alt: f }), el("figcaption", {}, f)))));
  main.replaceChildren(...parts);
  renderList();
}

function renderList() {
  const box = document.getElementById("list");
  if (!box) return;
  const rows = filtered();
  const pages = Math.max(1, Math.ceil(rows.length / PAGE));
  state.page = Math.min(state.page, pages - 1);
  const shown = rows.slice(state.page * PAGE, (state.page + 1) * PAGE);
  const table = el("table", { class: "games" },
    el("thead", {}, el("tr", {}, ...COLUMNS.map(([, h]) => el("th", {}, h)), el("th", { title: "the agent's utility (ContractSim, in the contract's base units) or score (CT-Bench), then its counterparty's" }, "Utility / score (agent / counterparty)"), el("th", {}, "Events"))),
    el("tbody", {}, ...shown.map((r) => el("tr", { class: r.outcome === "breach" ? "breach" : null, "data-id": r.id },
      ...COLUMNS.map(([k]) => el("td", {}, k === "contract" ? el("a", { href: "#/game/" + r.id }, r.contract) :
        k === "first_breach" && r.first_breach ? r.first_breach + (r.breach_week ? " (week " + r.breach_week + ")" : "") : r[k] ?? "")),
      el("td", { class: "num" }, r.utility === null ? "" : fmt(r.utility, 0) + " / " + fmt(r.other_utility, 0)),
      el("td", {}, el("span", { class: "badge " + (r.kept ? "kept" : "rebuilt") }, r.kept ? "kept" : "rebuilt on open"))))));
  document.getElementById("games-heading").textContent = "Games (" + gameCount(state.rows).toLocaleString("en-US") +
    (state.index.reading ? ", reading the files…" : "") + ")";
  const pager = el("div", { class: "pager" },
    el("button", { id: "prev", disabled: state.page === 0, onclick: () => { state.page--; renderList(); } }, "◀"),
    el("span", { id: "count" }, rows.length.toLocaleString("en-US") + " game(s), page " + (state.page + 1) + " of " + pages),
    el("button", { id: "next", disabled: state.page >= pages - 1, onclick: () => { state.page++; renderList(); } }, "▶"));
  box.replaceChildren(pager, table);
}

function gameCount(rows) {
  // a rational store's game is listed once per role (ids ending -c and -s): counted once
  return new Set(rows.map((r) => r.id.replace(/-[cs]$/, ""))).size;
}

// --- comparison: two agents on the same contract, environment, role, counterparty and seed --------------------

function pairKey(r) { return [r.game, r.contract, r.where, r.variant, r.role, r.counterparty, r.seed].join("|"); }

function renderCompare(a, b) {
  const byKey = (agent) => new Map(state.rows.filter((r) => r.agent === agent).map((r) => [pairKey(r), r]));
  const left = byKey(a), right = byKey(b);
  const pairs = [...left.keys()].filter((k) => right.has(k)).map((k) => [left.get(k), right.get(k)]);
  const diffs = pairs.map(([x, y]) => y.utility - x.utility);
  const mean = diffs.reduce((s, d) => s + d, 0) / (diffs.length || 1);
  const sd = Math.sqrt(diffs.reduce((s, d) => s + (d - mean) ** 2, 0) / Math.max(1, diffs.length - 1));
  const se = diffs.length > 1 ? sd / Math.sqrt(diffs.length) : null;
  const breaches = (side) => pairs.filter((p) => p[side].first_breach === p[side].role).length;
  const main = document.getElementById("main");
  main.replaceChildren(
    el("p", {}, el("a", { href: "#/" }, "← all games")),
    el("h2", {}, "Compare " + a + " (A) and " + b + " (B)"),
    el("p", { id: "paired-summary" }, pairs.length + " shared game(s) (same contract, environment or board, role, counterparty and seed); " +
      "mean paired difference B − A in utility: " + fmt(mean, 2) + (se === null ? "" : " ± " + fmt(se, 2) + " (standard error)") +
      "; breached first: A " + breaches(0) + ", B " + breaches(1)),
    el("table", { class: "pairs" },
      el("thead", {}, el("tr", {}, ...["Contract", "Env / board", "Role", "Counterparty", "Seed", "A utility", "B utility", "B − A", "A breach", "B breach", ""].map((h) => el("th", {}, h)))),
      el("tbody", {}, ...pairs.map(([x, y], k) => el("tr", {},
        el("td", {}, x.contract), el("td", {}, x.where), el("td", {}, x.role), el("td", {}, x.counterparty), el("td", {}, x.seed ?? ""),
        el("td", { class: "num" }, fmt(x.utility, 0)), el("td", { class: "num" }, fmt(y.utility, 0)), el("td", { class: "num" }, fmt(diffs[k], 0)),
        el("td", {}, x.first_breach ? x.first_breach + " wk " + x.breach_week : ""), el("td", {}, y.first_breach ? y.first_breach + " wk " + y.breach_week : ""),
        el("td", {}, el("a", { href: "#/pair/" + x.id + "/" + y.id }, "side by side")))))));
}

// --- a game ---------------------------------------------------------------------------------------------------

async function renderGame(id, box) {
  box.replaceChildren(el("p", {}, "Building the game…"));
  const g = await getJSON("game/" + id + ".json");
  const head = [el("p", {}, el("a", { href: "#/" }, "← all games"))];
  if (g.error) { box.replaceChildren(...head, el("p", { class: "error" }, "This game cannot be shown: " + g.error)); return; }
  const shown = el("span", { class: "badge " + (g.shown === "kept" ? "kept" : "rebuilt"), id: "shown" }, g.shown === "kept" ? "events kept in the record" : g.shown);
  box.replaceChildren(...head, ...(g.kind === "contractsim" ? contractsimGame(g, shown) : ctbenchGame(g, shown)));
}

function sourceView(source, id) {
  // the contract's text, one element per line; marks are set by highlight()
  const pre = el("div", { class: "source", id: id || "source" });
  source.text.replace(/\n$/, "").split("\n").forEach((line, k) => {
    pre.appendChild(el("span", { class: "line", "data-line": k + 1 }, el("span", { class: "ln" }, String(k + 1)), el("span", { class: "code" }, line)));
  });
  pre._source = source;
  return pre;
}

function highlight(pre, keys, fired) {
  const src = pre._source;
  pre.querySelectorAll(".line").forEach((lineNode) => {
    const n = Number(lineNode.dataset.line);
    const code = lineNode.querySelector(".code");
    const text = src.text.split("\n")[n - 1] || "";
    const marks = [];
    keys.forEach((key) => {
      const s = src.spans[key];
      if (!s || n < s[0] || n > s[2]) return;
      marks.push([n === s[0] ? s[1] - 1 : 0, n === s[2] ? s[3] - 1 : text.length, key === fired, key]);
    });
    if (!marks.length) { code.replaceChildren(text); return; }
    marks.sort((x, y) => x[0] - y[0]);
    const parts = [];
    let at = 0;
    for (const [from, to, isFired, key] of marks) {
      if (from < at) continue;
      parts.push(text.slice(at, from), el("mark", { class: isFired ? "fired" : null, "data-clause": key }, text.slice(from, to)));
      at = to;
    }
    parts.push(text.slice(at));
    code.replaceChildren(...parts);
  });
  const first = pre.querySelector("mark");
  if (first) pre.scrollTop = Math.max(0, first.parentNode.parentNode.offsetTop - pre.offsetTop - 40);
}

// --- clause coverage: which clauses the viewed games triggered, how often, and the folder's tests ------------------

let coverageLoad = null; // {version, promise}: made again when the game list changed
function loadCoverage() {
  const version = state.index ? state.index.version + ":" + state.index.games : "";
  if (!coverageLoad || coverageLoad.version !== version) coverageLoad = { version, promise: getJSON("coverage.json") };
  return coverageLoad.promise;
}

function coverageBox(pre) {
  // filled when the counts arrive: every viewed game of these terms is judged, which can take a while
  const box = el("div", { class: "coverage" }, el("p", { class: "meta" }, "Counting the clauses the viewed games triggered…"));
  loadCoverage().then((c) => showCoverage(box, pre, c))
    .catch((e) => box.replaceChildren(el("p", { class: "meta" }, "No clause coverage: " + e.message)));
  return box;
}

function showCoverage(box, pre, c) {
  const src = pre._source;
  const played = c.contracts.find((x) => x.terms === src.terms);
  const tested = c.tests.find((x) => x.terms === src.terms);
  if (!played && !tested) {
    box.replaceChildren(el("p", { class: "meta" }, "No clause coverage: no game of these terms could be judged, and no test in the folder names them."));
    return;
  }
  const rows = new Map(); // span key -> {clause, played, tested}
  for (const x of (played ? played.clauses : [])) rows.set(x.span, { clause: x.clause, played: x });
  for (const x of (tested ? tested.clauses : [])) rows.set(x.span, { clause: x.clause, ...rows.get(x.span), tested: x });
  // a gutter beside the line numbers: the code keeps its place whatever the pane's width
  pre.querySelectorAll(".line").forEach((n) => { if (!n.querySelector(".cov")) n.insertBefore(el("span", { class: "cov" }), n.querySelector(".code")); });
  pre.classList.toggle("with-tests", Boolean(tested));
  const line = (key) => { const s = src.spans[key]; return s ? pre.querySelector('.line[data-line="' + s[0] + '"]') : null; };
  const table = el("table", { class: "coverage-table" }, el("tr", {}, el("th", {}, "Clause"), played ? el("th", {}, "Games") : null, tested ? el("th", {}, "Tests") : null));
  for (const [key, r] of rows) {
    const p = r.played, t = r.tested;
    const never = p && p.status === "never triggered";
    const flagged = never && p.enforcement; // an enforcement clause no agent ever triggered: a finding
    const mark = !p ? "" : p.status === "triggered" ? "✓ " + p.games + "/" + p.observable_in :
      never ? "✗ 0/" + p.observable_in : "? –";
    const tests = !t ? "" : t.dead ? "dead" : t.tests.length + " test" + (t.tests.length === 1 ? "" : "s");
    const status = p ? (p.status === "triggered" ? "triggered" : never ? "never" : "unobservable") : null;
    const title = [p ? p.clause + ": " + p.status + " (" + p.games + " of " + p.observable_in + " games that could show it)" : null,
      t ? (t.dead ? "dead: " + t.dead : "tests: " + (t.tests.join(", ") || "none")) : null].filter(Boolean).join("\n");
    const where = line(key);
    if (where) {
      where.querySelector(".cov").replaceWith(el("span", { class: "cov", "data-clause": key, "data-status": status, title },
        el("span", { class: "cov-games" }, mark), tested ? el("span", { class: "cov-tests" }, tests) : null));
      if (flagged) where.classList.add("never-triggered");
    }
    table.appendChild(el("tr", { "data-clause": key, "data-status": status, class: flagged ? "never-triggered" : null, title,
      onclick: () => highlight(pre, [key], flagged ? key : null) },
      el("td", {}, r.clause), played ? el("td", { class: "num" }, p ? (p.status.startsWith("not") ? "not observable" : p.games + " / " + p.observable_in) : "–") : null,
      tested ? el("td", { class: "num" }, t ? (t.dead ? "dead: " + t.dead : String(t.tests.length)) : "–") : null));
  }
  const findings = played ? played.clauses.filter((x) => x.enforcement && x.status === "never triggered").map((x) => x.clause) : [];
  box.replaceChildren(
    el("h3", {}, "Clause coverage"),
    el("p", { class: "meta provenance" }, played ? "Triggered in " + played.games + " viewed game(s) of these terms, from " + played.files.join(", ") +
      (c.unread ? " (" + c.unread + " record(s) under the folder could not be judged)" : "") : "No viewed game of these terms could be judged.",
      tested ? ". Tests: " + tested.tests + " in " + tested.file + " (hover a clause for their names)." : "."),
    findings.length ? el("p", { class: "error findings" }, "Never triggered: " + findings.join(", ")) : null,
    table);
}

function actionText(a) {
  if (!a) return "–";
  if ("pay" in a) return "pay " + money(a.pay);
  if ("order" in a) return "order " + triple(a.order);
  return "deliver " + triple(a.produce);
}

function contractsimGame(g, shown) {
  const products = g.products.join("/");
  const header = [
    el("h2", {}, g.contract + (g.env ? " — Env " + g.env + ", seed " + g.seed : "")),
    el("p", { class: "meta" }, g.customer ? "Customer " + g.customer + " vs Supplier " + g.supplier + " · " : "", shown,
      g.u_customer !== undefined ? " · utilities: Customer " + money(g.u_customer) + ", Supplier " + money(g.u_supplier) : "",
      " · contingency mode " + g.contingencies),
    el("p", { id: "verdict", class: g.verdict.first_breach ? "error" : "" }, g.verdict.first_breach ?
      "First breach: the " + g.verdict.first_breach + " in week " + g.verdict.week + " — " + g.verdict.reason : g.verdict.reason),
  ];
  const source = sourceView(g.source);
  const detail = el("div", { id: "week-detail" });
  const rows = g.weeks.map((w) => {
    const customer = w.role === "customer";
    const did = customer ? ["paid " + money(w.paid)] :
      [w.order ? "ordered " + triple(w.order) + " (" + money(w.cost) + ")" : null, "delivered " + triple(w.delivered) +
        (w.credited && triple(w.credited) !== triple(w.delivered) ? " (credited " + triple(w.credited) + ")" : "")];
    const rcc = (w.decisions || []).map((d) => actionText(d.rcc) + (d.expected ? " (E[U] " + signed(d.expected.difference) + ")" : ""));
    const lines = (items) => items.filter(Boolean).flatMap((t, k) => (k ? [el("br"), t] : [t]));
    const differs = (w.decisions || []).some((d) => d.rcc && !d.same);
    const due = customer ? money(w.due) + (w.deduction ? " (" + money(w.deduction) + " deducted)" : "") :
      triple(w.required) + (triple(w.required) !== triple(w.scheduled) ? " (scheduled " + triple(w.scheduled) + ")" : "");
    const verdict = w.excluded ? "nothing due" : w.compliant ? "ok" : "BREACH";
    const tr = el("tr", { class: [w.compliant ? "" : "breach", differs ? "rcc-differs" : ""].join(" ").trim() || null, "data-week": w.week },
      el("td", { class: "num" }, w.week), el("td", {}, customer ? "Customer" : "Supplier"),
      el("td", {}, due), el("td", {}, lines(did)),
      el("td", { class: "verdict" }, verdict, w.enforcement && w.enforcement.length ? " — " + w.enforcement.join("; ") : ""),
      el("td", { class: "rcc" }, g.env ? lines(rcc) : "–"),
      el("td", {}, w.prices ? triple(w.prices) : ""), el("td", {}, w.received ? lines([triple(w.received), "spoiled " + triple(w.spoiled)]) : ""),
      el("td", { class: "num" }, w.cash !== undefined ? money(w.cash) : ""), el("td", { class: "num" }, w.budget_left !== undefined ? money(w.budget_left) : ""),
      el("td", {}, triple(w.memory_after)));
    tr.addEventListener("click", () => selectWeek(w));
    return tr;
  });
  function selectWeek(w) {
    rows.forEach((r) => r.classList.toggle("selected", Number(r.dataset.week) === w.week));
    const keys = w.clauses || [(w.role === "customer" ? "pay." : "deliver.") + w.week];
    highlight(source, keys, w.clauses ? w.clauses[0] : null);
    const parts = [el("h3", {}, "Week " + w.week)];
    if (w.reason) parts.push(el("p", { class: "error", id: "reason" }, "Breach: " + w.reason + " (clause: " + w.clauses.join(", ") + ")"));
    parts.push(el("p", {}, "contingency memory " + triple(w.memory_before) + " → " + triple(w.memory_after) +
      (w.observed_breach ? "; the counterparty had breached in an earlier week (D = 1)" : "")));
    for (const d of w.decisions || []) {
      parts.push(el("p", { class: "decision" }, d.phase + ": the agent chose " + actionText(d.action) + "; RCC in the same state: " + actionText(d.rcc) +
        (d.same ? " (the same)" : " (different)") + (d.note ? " — " + d.note : "")));
      if (d.expected && d.expected.who === "customer") parts.push(el("p", { class: "expected" }, "Expected Customer utility still to come " +
        "(value delivered less payments, this one included), each payment followed by both sides' RCC play (exact DP enumeration): " +
        "the agent's " + money2(d.expected.agent) + ", RCC's " + money2(d.expected.rcc) + " (RCC − agent: " + signed(d.expected.difference) + ")."));
      else if (d.expected) parts.push(el("p", { class: "expected" }, "Expected Supplier utility still to come, each order followed by RC's play (exact DP, eq. 12): " +
        "the agent's " + money2(d.expected.agent) + " (P̂ " + fmt(d.expected.p_agent, 3) + "), RCC's " + money2(d.expected.rcc) +
        " (P̂ " + fmt(d.expected.p_rcc, 3) + ") (RCC − agent: " + signed(d.expected.difference) + ")."));
    }
    detail.replaceChildren(...parts);
  }
  const table = el("table", { class: "weeks", id: "weeks" },
    el("thead", {}, el("tr", {}, ...["Week", "Acts", "Due (" + products + ")", "What was done", "Verdict", "RCC would", "Prices", "Received", "Supplier cash", "Customer budget", "Memory"].map((h) => el("th", {}, h)))),
    el("tbody", {}, ...rows));
  const charts = g.env ? [el("h3", {}, "Cash and inventory"), el("div", { class: "cols" },
    chart("cash", [["Supplier cash", g.weeks.map((w) => w.cash)], ["Customer budget left", g.weeks.map((w) => w.budget_left)]]),
    chart("inventory", g.inputs.map((name, k) => [name + " after receipts", g.weeks.map((w) => (w.stock ? w.stock[k] : null))])))] : [];
  const out = [...header, el("div", { class: "cols" }, el("div", { class: "grow" }, table, detail, ...charts),
    el("div", { class: "side" }, el("h3", {}, "Contract"), source, coverageBox(source)))];
  if (g.negotiation) {
    out.push(el("h3", {}, "The negotiation that agreed this contract (" + g.negotiation.outcome + ")"),
      el("ol", { id: "negotiation" }, ...g.negotiation.turns.map((t) => el("li", {}, "round " + t.round + ", " + t.role + ": ", el("pre", { class: "text" }, t.response)))));
  }
  if (g.llm_calls && g.llm_calls.length) out.push(llmCalls(g.llm_calls, g.llm_usage));
  const first = g.weeks.find((w) => !w.compliant) || g.weeks[0];
  setTimeout(() => selectWeek(first), 0);
  return out;
}

function chart(id, series) {
  const W = 380, H = 170, L = 44, B = 22;
  const values = series.flatMap(([, v]) => v).filter((v) => v !== null && v !== undefined);
  const top = Math.max(1, ...values);
  const x = (k) => L + (k * (W - L - 10)) / 10, y = (v) => H - B - (v * (H - B - 10)) / top;
  const node = svg("svg", { class: "chart", id: "chart-" + id, width: W, height: H, viewBox: "0 0 " + W + " " + H });
  node.appendChild(svg("line", { x1: L, y1: H - B, x2: W - 10, y2: H - B, stroke: "#999" }));
  node.appendChild(svg("line", { x1: L, y1: 10, x2: L, y2: H - B, stroke: "#999" }));
  node.appendChild(svg("text", { x: 2, y: 14 }, String(top)));
  node.appendChild(svg("text", { x: 2, y: H - B }, "0"));
  for (let k = 0; k < 11; k++) node.appendChild(svg("text", { x: x(k) - 4, y: H - 6 }, String(k + 1)));
  const colours = ["#1565c0", "#e65100", "#2e7d32"];
  series.forEach(([, v], s) => {
    const points = v.map((value, k) => (value === null || value === undefined ? null : x(k) + "," + y(value))).filter(Boolean);
    points.forEach((p) => { const [cx, cy] = p.split(","); node.appendChild(svg("circle", { cx, cy, r: 2.5, fill: colours[s] })); });
    node.appendChild(svg("polyline", { points: points.join(" "), fill: "none", stroke: colours[s], "stroke-width": 2 }));
  });
  return el("div", {}, node, el("div", { class: "legend" }, ...series.map(([name], s) => el("span", {}, el("i", { class: "sw sw" + s }), name))));
}

function llmCalls(calls, usage) {
  const total = usage ? usage.input_tokens + " input and " + usage.output_tokens + " output tokens" +
    (usage.cost_usd === null ? ", cost unknown" : ", $" + Number(usage.cost_usd).toFixed(4)) : "";
  return el("div", { id: "llm" }, el("h3", {}, "Model calls (" + calls.length + "): " + total),
    ...calls.map((c, k) => el("details", { class: "llm-call" },
      el("summary", {}, (k + 1) + ". " + c.purpose + " — " + c.model + ", " + c.input_tokens + "+" + c.output_tokens + " tokens" +
        (c.cost_usd === null || c.cost_usd === undefined ? "" : ", $" + Number(c.cost_usd).toFixed(4)) + (c.error ? " — error: " + c.error : "")),
      el("h4", {}, "Prompt"), el("pre", { class: "text" }, c.prompt), el("h4", {}, "Reply"), el("pre", { class: "text reply" }, c.reply))));
}

// --- CT-Bench -------------------------------------------------------------------------------------------------

const TILE = { red: "#ef5350", blue: "#42a5f5", green: "#66bb6a" };

function boardSvg(g, frame) {
  const S = 70, P = 10;
  const node = svg("svg", { id: "board", width: 4 * S + 2 * P, height: 4 * S + 2 * P, viewBox: "0 0 " + (4 * S + 2 * P) + " " + (4 * S + 2 * P) });
  g.board.forEach((row, r) => row.forEach((colour, c) => {
    node.appendChild(svg("rect", { x: P + c * S, y: P + r * S, width: S - 2, height: S - 2, fill: TILE[colour], "fill-opacity": 0.55, stroke: "#555", "data-tile": r + "," + c }));
    node.appendChild(svg("text", { x: P + c * S + 4, y: P + r * S + 13, "font-size": 10, fill: "#333" }, "(" + r + "," + c + ")"));
  }));
  const centre = (t, dx) => [P + t[1] * S + S / 2 + dx, P + t[0] * S + S / 2];
  [["red", -9, "#b71c1c"], ["blue", 9, "#0d47a1"]].forEach(([p, dx, colour]) => {
    node.appendChild(svg("polyline", { points: frame.trail[p].map((t) => centre(t, dx).join(",")).join(" "), fill: "none", stroke: colour, "stroke-width": 3, "stroke-opacity": 0.7 }));
    const [cx, cy] = centre(frame.position[p], dx);
    node.appendChild(svg("circle", { cx, cy, r: 10, fill: colour, stroke: "#fff", "stroke-width": 2, "data-player": p, "data-tile": frame.position[p].join(",") }));
    node.appendChild(svg("text", { x: cx - 4, y: cy + 4, fill: "#fff", "font-size": 11 }, p[0].toUpperCase()));
  });
  return node;
}

function chipsTable(frame) {
  return el("table", { id: "chips" }, el("tr", {}, el("th", {}, "Chips"), el("th", {}, "red"), el("th", {}, "blue"), el("th", {}, "green")),
    ...["red", "blue"].map((p) => el("tr", { "data-player": p }, el("th", {}, p), ...["red", "blue", "green"].map((c) => el("td", { class: "num" }, frame.chips[p][c])))));
}

function ctbenchGame(g, shown) {
  const last = g.frames.length - 1;
  const boardBox = el("div", {}), chipsBox = el("div", {}), label = el("p", { id: "frame-label" });
  const source = g.source ? sourceView(g.source) : null;
  const events = el("ol", { class: "events", id: "events" }, ...g.events.map((e) => el("li", { "data-frame": e.frame }, (e.round ? "round " + e.round + ": " : "") + e.text)));
  const slider = el("input", { type: "range", min: 0, max: last, value: last, id: "slider", oninput: (e) => show(Number(e.target.value)) });
  function show(k) {
    const frame = g.frames[k];
    boardBox.replaceChildren(boardSvg(g, frame));
    chipsBox.replaceChildren(chipsTable(frame));
    label.textContent = k === 0 ? "Start: both players on (0,0)" : "After move " + k + " of " + last + " (round " + frame.round + "): " + frame.text;
    [...events.children].forEach((li, j) => {
      const f = g.events[j].frame;
      li.className = f > k ? "future" : f === k ? "now" : "";
    });
    if (source) {
      const clauses = g.events.filter((e) => e.clause && e.frame === k).map((e) => e.clause);
      highlight(source, clauses, clauses[0] || null);
    }
  }
  const scores = g.scores ? "scores: red " + g.scores[0] + ", blue " + g.scores[1] + " (before contract effects " + g.raw_scores.join(", ") + "; baselines " + g.baselines.join(", ") + ")" : "";
  const promises = el("table", { id: "promises" }, el("tr", {}, ...["Player", "Partner coverage honoured", "unfulfilled", "Contract entries paid", "forfeited"].map((h) => el("th", {}, h))),
    ...Object.entries(g.coverage || {}).map(([p, c]) => el("tr", {}, el("td", {}, p), el("td", { class: "num" }, c.honoured), el("td", { class: "num" }, c.unfulfilled), el("td", { class: "num" }, c.contract_paid), el("td", { class: "num" }, c.contract_forfeit))));
  const out = [
    el("h2", {}, "CT-Bench board " + g.board_id + " (" + g.board_class + ")" + (g.condition ? ", " + g.condition : "") + (g.mode ? ", " + g.mode : "")),
    el("p", { class: "meta" }, g.red ? "P-Red " + g.red + " vs P-Blue " + g.blue + " · " : "", shown, g.rules ? " · " + g.rules + " rules" : ""),
    el("p", { id: "outcome" }, (g.end_reason ? g.end_reason + "; " : "") + scores +
      (g.finished.length ? "; reached the goal: " + g.finished.join(", ") : "") + (g.forfeited.length ? "; forfeited: " + g.forfeited.join(", ") : "")),
    el("div", { class: "board-wrap" },
      el("div", {}, boardBox, el("div", {}, slider), label, chipsBox),
      el("div", { class: "grow" }, el("h3", {}, "What happened"), events),
      source ? el("div", { class: "side" }, el("h3", {}, "Contract"), source, coverageBox(source)) : null),
    el("h3", {}, "Promises kept and broken"), promises,
  ];
  if (g.negotiation) {
    out.push(el("h3", {}, "Negotiation (" + (g.negotiation.agreed ? "agreed" : "no agreement") + ")"),
      el("ol", { id: "negotiation" }, ...g.negotiation.messages.map((m) => el("li", {}, el("pre", { class: "text" }, m)))));
    if (g.negotiation.judge_contract) out.push(el("h3", {}, "The judge's contract"), el("pre", { class: "text" }, JSON.stringify(g.negotiation.judge_contract, null, 1)));
  }
  if (g.transcript) out.push(el("h3", {}, "Agreement the judge reads"), el("pre", { class: "text" }, g.transcript));
  if (g.llm_calls && g.llm_calls.length) out.push(llmCalls(g.llm_calls, g.llm_usage));
  setTimeout(() => show(last), 0);
  return out;
}

// --- routing and polling ----------------------------------------------------------------------------------------

async function route() {
  const main = document.getElementById("main");
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  try {
    if (parts[0] === "game" && parts[1]) await renderGame(parts[1], main);
    else if (parts[0] === "compare") renderCompare(parts[1], parts[2]);
    else if (parts[0] === "pair") {
      const a = el("div", { id: "pair-a" }), b = el("div", { id: "pair-b" });
      main.replaceChildren(el("p", {}, el("a", { href: "#/" }, "← all games")), el("div", { class: "pair" }, a, b));
      await Promise.all([renderGame(parts[1], a), renderGame(parts[2], b)]);
    } else renderOverview();
  } catch (err) {
    main.replaceChildren(el("p", { class: "error" }, String(err)));
  }
}

async function start() {
  await loadIndex();
  window.addEventListener("hashchange", route);
  await route();
  document.body.dataset.ready = "1";
  if (state.index.live) {
    const poll = async () => {
      try {
        const changed = await loadIndex();
        if (changed && !location.hash.startsWith("#/game") && !location.hash.startsWith("#/pair")) {
          if (location.hash.startsWith("#/compare")) route();
          else if (changed === "grew" && document.getElementById("list")) renderList();
          else renderOverview();
        }
      } catch (err) { /* the server stopped: keep what is shown */ }
      setTimeout(poll, state.index.reading ? 300 : 2000);
    };
    setTimeout(poll, state.index.reading ? 300 : 2000);
  }
}

start();
