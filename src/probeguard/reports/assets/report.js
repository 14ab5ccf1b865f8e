// ProbeGuard report: drill-down, filters, search, sorting, copy buttons.
// Untrusted text is only ever written with textContent (never innerHTML), so it stays text.
(function () {
  "use strict";
  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function badge(text) { return el("span", "badge " + text, text); }
  var dataNode = document.getElementById("pg-data");
  if (dataNode) drillDown(JSON.parse(dataNode.textContent));

  // -- the drill-down (scan reports): filters, search, sortable units, detail panel ---------
  function drillDown(data) {
  var PAGE = 200;
  // Long texts are stored once in data.texts and referred to by index: resolve them here.
  function t(x) { return typeof x === "number" ? data.texts[x] : x; }
  // Records are stored as {cols, rows} tables (html_data.columns): back to objects here.
  function objects(table) {
    return table.rows.map(function (r) { var o = {}; table.cols.forEach(function (k, i) { o[k] = r[i]; }); return o; });
  }
  data.cases = objects(data.cases);
  data.units = objects(data.units);
  data.units.forEach(function (u) { if (u.att) u.att.swaps = objects(u.att.swaps); });
  data.chunks.forEach(function (k) { k[3] = t(k[3]); });
  data.cases.forEach(function (c) { c.q = t(c.q); c.answer = t(c.answer); c.var = t(c.var); c.expect = t(c.expect); });
  data.units.forEach(function (u) {
    u.q = t(u.q);
    u.ev.forEach(function (row) { row[1] = t(row[1]); });
    if (u.att) {
      u.att.reason = t(u.att.reason);
      u.att.swaps.forEach(function (s) {
        s.judged = t(s.judged); s.reason = t(s.reason); s.removed = t(s.removed);
        s.runs.forEach(function (r) { r.answer = t(r.answer); r.docs = t(r.docs); });
      });
    }
  });
  var state = { sort: null, dir: 1, shown: PAGE, rows: [] };

  // -- filters ------------------------------------------------------------------------------
  var filters = { probe: "f-probe", outcome: "f-outcome", cause: "f-cause", tag: "f-tag" };
  function fillSelect(id, values) {
    var select = document.getElementById(id);
    values.forEach(function (v) { var o = el("option", "", v); o.value = v; select.appendChild(o); });
  }
  function distinct(fn) {
    var seen = {};
    data.units.forEach(function (u) { [].concat(fn(u)).forEach(function (v) { if (v) seen[v] = 1; }); });
    return Object.keys(seen).sort();
  }
  fillSelect("f-probe", distinct(function (u) { return u.probe; }));
  fillSelect("f-outcome", distinct(function (u) { return u.outcome; }));
  fillSelect("f-cause", distinct(function (u) { return u.cause; }));
  fillSelect("f-tag", distinct(function (u) { return u.tags; }));

  function haystack(u) {
    if (u._text === undefined) {
      var parts = [u.probe, u.group, u.q, u.cause, u.mech];
      u.cases.forEach(function (i) { var c = data.cases[i]; parts.push(c.id, c.q, c.answer); });
      u._text = parts.join("\n").toLowerCase();
    }
    return u._text;
  }
  function matches(u) {
    var v = function (id) { return document.getElementById(id).value; };
    if (v("f-probe") && u.probe !== v("f-probe")) return false;
    if (v("f-outcome") && u.outcome !== v("f-outcome")) return false;
    if (v("f-cause") && u.cause !== v("f-cause")) return false;
    if (v("f-tag") && u.tags.indexOf(v("f-tag")) < 0) return false;
    var q = v("f-search").trim().toLowerCase();
    return !q || haystack(u).indexOf(q) >= 0;
  }

  // -- the units table ----------------------------------------------------------------------
  var tbody = document.querySelector("#units tbody");
  var columns = ["probe", "group", "outcome", "cause", "mech", "q"];
  function refresh() {
    state.rows = data.units.filter(matches);
    if (state.sort) {
      var key = state.sort, dir = state.dir;
      state.rows.sort(function (a, b) { return a[key] < b[key] ? -dir : a[key] > b[key] ? dir : 0; });
    }
    render();
  }
  function render() {
    tbody.textContent = "";
    state.rows.slice(0, state.shown).forEach(function (u) {
      var tr = el("tr");
      tr.tabIndex = 0;
      tr.dataset.unit = String(data.units.indexOf(u));
      columns.forEach(function (key) {
        var td = el("td");
        if (key === "outcome") td.appendChild(badge(u.outcome)); else td.textContent = u[key] || "–";
        tr.appendChild(td);
      });
      tbody.appendChild(tr);
    });
    document.getElementById("f-count").textContent =
      state.rows.length + " of " + data.units.length + " shown";
    var more = document.getElementById("more");
    more.hidden = state.rows.length <= state.shown;
    more.textContent = "Show all " + state.rows.length;
  }
  Object.keys(filters).forEach(function (k) {
    document.getElementById(filters[k]).addEventListener("change", function () { state.shown = PAGE; refresh(); });
  });
  document.getElementById("f-search").addEventListener("input", function () { state.shown = PAGE; refresh(); });
  document.getElementById("more").addEventListener("click", function () { state.shown = Infinity; render(); });
  function openRow(tr) {
    [].forEach.call(tbody.querySelectorAll("tr.open"), function (r) { r.classList.remove("open"); });
    tr.classList.add("open");
    showDetail(data.units[Number(tr.dataset.unit)]);
  }
  tbody.addEventListener("click", function (e) { var tr = e.target.closest("tr"); if (tr) openRow(tr); });
  tbody.addEventListener("keydown", function (e) {
    var tr = e.target.closest("tr");
    if (!tr) return;
    if (e.key === "Enter" || e.key === " ") { e.preventDefault(); openRow(tr); }
    if (e.key === "ArrowDown" && tr.nextElementSibling) { e.preventDefault(); tr.nextElementSibling.focus(); }
    if (e.key === "ArrowUp" && tr.previousElementSibling) { e.preventDefault(); tr.previousElementSibling.focus(); }
  });
  [].forEach.call(document.querySelectorAll("#units th"), function (th) {
    function sort() {
      var key = th.dataset.key;
      state.dir = state.sort === key ? -state.dir : 1;
      state.sort = key;
      [].forEach.call(document.querySelectorAll("#units th"), function (o) { o.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", state.dir > 0 ? "ascending" : "descending");
      refresh();
    }
    th.addEventListener("click", sort);
    th.addEventListener("keydown", function (e) { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sort(); } });
  });

  // -- the detail panel ---------------------------------------------------------------------
  function pairs(rows) {
    var dl = el("dl", "ev");
    rows.forEach(function (r) { dl.appendChild(el("dt", "", r[0])); dl.appendChild(el("dd", "", r[1])); });
    return dl;
  }
  function highlighted(text, signals) {
    // The answer as text nodes, each planted signal wrapped in <mark> (case-insensitive).
    var box = el("div", "answer");
    var lower = text.toLowerCase(), i = 0;
    var terms = signals.map(function (s) { return s.toLowerCase(); }).filter(function (s) { return s; });
    while (i < text.length) {
      var best = -1, len = 0;
      terms.forEach(function (t) { var at = lower.indexOf(t, i); if (at >= 0 && (best < 0 || at < best)) { best = at; len = t.length; } });
      if (best < 0) { box.appendChild(document.createTextNode(text.slice(i))); break; }
      box.appendChild(document.createTextNode(text.slice(i, best)));
      box.appendChild(el("mark", "", text.slice(best, best + len)));
      i = best + len;
    }
    return box;
  }
  function caseBlock(c, open) {
    // One case per collapsible block: the first ones open, the rest one click (or Enter) away.
    var box = el("details", "case");
    box.open = open;
    box.appendChild(el("summary", "", c.id + (c.role ? " (" + c.role + ")" : "") +
      (c.refused ? " — refused" : c.error ? " — error" : "")));
    box.appendChild(pairs([["question", c.q], ["variation", c.var], ["tags", c.tags.join(", ") || "–"],
      ["expected", c.mode + (c.expect ? ": " + c.expect : "")], ["planted signal", c.sig.join(", ") || "–"]]));
    if (c.error) box.appendChild(el("p", "badge error", c.error));
    box.appendChild(el("h5", "", "Answer" + (c.refused ? " (refused)" : "")));
    box.appendChild(highlighted(c.answer || "", c.sig));
    box.appendChild(el("h5", "", "Retrieved contexts, by rank"));
    c.ctx.forEach(function (x) {
      var chunk = data.chunks[x[0]];
      var div = el("div", "ctx " + x[2].join(" "));
      var head = el("div");
      head.appendChild(el("b", "", "#" + x[1] + " " + chunk[1] + " "));
      x[2].forEach(function (m) { head.appendChild(badge(m)); head.appendChild(document.createTextNode(" ")); });
      head.appendChild(el("small", "", chunk[0] + (chunk[2] ? " — " + chunk[2] : "")));
      div.appendChild(head);
      div.appendChild(el("div", "", chunk[3]));
      box.appendChild(div);
    });
    return box;
  }
  function attributionBlock(a) {
    var box = el("div");
    box.appendChild(el("h4", "", "Attribution"));
    box.appendChild(pairs([["cause", a.cause], ["mechanism", a.mech || "–"], ["reason", a.reason],
      ["also repaired by", a.also || "–"], ["fix", a.fix || "–"]]));
    var table = el("table"), head = el("tr");
    ["swap", "outcome", "re-run answer", "retrieved", "re-judged"].forEach(function (h) { head.appendChild(el("th", "", h)); });
    table.appendChild(head);
    a.swaps.forEach(function (s) {
      var tr = el("tr"), run = s.runs[0] || {};
      tr.appendChild(el("td", "", s.swap));
      var td = el("td"); td.appendChild(badge(s.outcome)); if (s.reason) td.appendChild(el("div", "", s.reason)); tr.appendChild(td);
      tr.appendChild(el("td", "", run.error || (run.answer || "–") + (run.refused ? " (refused)" : "")));
      tr.appendChild(el("td", "", (run.docs || "–") + (s.removed ? "; removed " + s.removed : "")));
      tr.appendChild(el("td", "", s.judged));
      table.appendChild(tr);
    });
    box.appendChild(table);
    return box;
  }
  function showDetail(u) {
    var panel = document.getElementById("detail");
    panel.textContent = "";
    var h = el("h3", "", u.probe + " / " + u.group + " ");
    h.appendChild(badge(u.outcome));
    panel.appendChild(h);
    panel.appendChild(el("h4", "", "Verdict evidence"));
    panel.appendChild(pairs(u.ev));
    if (u.att) panel.appendChild(attributionBlock(u.att));
    panel.appendChild(el("h4", "", u.cases.length + " case" + (u.cases.length === 1 ? "" : "s")));
    u.cases.forEach(function (i, k) { panel.appendChild(caseBlock(data.cases[i], k < 2)); });
    panel.focus();
  }

  refresh();
  }

  // -- static tables: sort by clicking a header ---------------------------------------------
  [].forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    [].forEach.call(table.querySelectorAll("thead th"), function (th, col) {
      th.tabIndex = 0;
      function sort() {
        var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
        [].forEach.call(table.querySelectorAll("thead th"), function (o) { o.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", dir > 0 ? "ascending" : "descending");
        var body = table.tBodies[0], rows = [].slice.call(body.rows);
        function key(r) { var c = r.cells[col]; var s = c && c.dataset.sort; var t = s !== undefined ? s : (c ? c.textContent : ""); var n = parseFloat(t); return isNaN(n) ? t : n; }
        rows.sort(function (a, b) { var x = key(a), y = key(b); return x < y ? -dir : x > y ? dir : 0; });
        rows.forEach(function (r) { body.appendChild(r); });
      }
      th.addEventListener("click", sort);
      th.addEventListener("keydown", function (e) { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sort(); } });
    });
  });

  // -- copy buttons and keys ----------------------------------------------------------------
  [].forEach.call(document.querySelectorAll("button.copy"), function (b) {
    b.addEventListener("click", function () {
      var text = document.getElementById(b.dataset.copy).textContent;
      var done = function () { b.textContent = "Copied"; };
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(text).then(done, function () { selectText(b.dataset.copy); });
      } else { selectText(b.dataset.copy); }
    });
  });
  function selectText(id) {
    var range = document.createRange();
    range.selectNodeContents(document.getElementById(id));
    var sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(range);
  }
  document.addEventListener("keydown", function (e) {
    var typing = /^(INPUT|SELECT|TEXTAREA)$/.test(document.activeElement.tagName);
    var search = document.getElementById("f-search"), detail = document.getElementById("detail");
    if (e.key === "/" && !typing && search) { e.preventDefault(); search.focus(); }
    if (e.key === "Escape" && detail) { detail.textContent = ""; }
  });

  document.body.dataset.ready = "1";
})();
