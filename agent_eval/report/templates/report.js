/* agent-eval report: sorting, filtering, search and paging of the results table, opening
   the conversation a link points at, and expanding or collapsing every conversation. The
   page's Content-Security-Policy allows this script by its sha256 hash and nothing else. It
   only moves, hides and shows elements already in the page and writes plain text
   (textContent): it never parses markup. The view state lives in the
   query string (?status=error&sort=-tokens&q=refund&page=2&size=25), so a view can be shared. */
(function () {
  "use strict";
  var body = document.body;
  body.setAttribute("data-script", "ready");

  function openTarget() {
    var id = location.hash.slice(1);
    try { id = decodeURIComponent(id); } catch (e) { /* a malformed escape: use it as is */ }
    var el = id ? document.getElementById(id) : null;
    if (!el) return;
    for (var node = el; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") node.open = true;
    }
    var inner = el.querySelector(":scope > details");
    if (inner) inner.open = true;
    el.scrollIntoView();
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();

  var toggles = document.getElementById("conversation-controls");
  if (toggles) {
    var sections = document.querySelectorAll("section.conversation > details");
    toggles.addEventListener("click", function (event) {
      var button = event.target.closest("button[data-toggle]");
      if (!button) return;
      var open = button.getAttribute("data-toggle") === "expand";
      for (var i = 0; i < sections.length; i++) sections[i].open = open;
    });
    toggles.hidden = false;
  }

  var table = document.getElementById("results-table");
  var controls = document.getElementById("controls");
  if (!table || !controls) return;
  var tbody = table.tBodies[0];
  var original = Array.prototype.slice.call(tbody.rows);
  var filters = ["status", "verdict", "metric", "formatter", "agreement"];
  var numeric = { score: true, label: true, tokens: true, latency: true };
  var selects = {};
  filters.forEach(function (name) {
    selects[name] = controls.querySelector('select[name="' + name + '"]');
  });
  var search = controls.querySelector('input[name="q"]');
  var sizer = controls.querySelector('select[name="size"]');
  var prev = controls.querySelector('button[data-page="prev"]');
  var next = controls.querySelector('button[data-page="next"]');
  var info = document.getElementById("results-info");
  var headers = Array.prototype.slice.call(table.tHead.querySelectorAll("th[data-key]"));
  var collator = new Intl.Collator(undefined, { numeric: true, sensitivity: "base" });
  var defaultSize = sizer.value;
  var params = new URLSearchParams(location.search);
  var state = { sort: params.get("sort") || "", page: parseInt(params.get("page"), 10) || 1 };

  function choose(select, value) {
    if (!select || value === null) return;
    for (var i = 0; i < select.options.length; i++) {
      if (select.options[i].value === value) select.value = value;
    }
  }
  filters.forEach(function (name) { choose(selects[name], params.get(name)); });
  choose(sizer, params.get("size"));
  search.value = params.get("q") || "";

  function matches(row) {
    for (var i = 0; i < filters.length; i++) {
      var select = selects[filters[i]];
      if (select && select.value && row.getAttribute("data-" + filters[i]) !== select.value) {
        return false;
      }
    }
    var terms = search.value.trim().toLowerCase().split(/\s+/).filter(Boolean);
    if (!terms.length) return true;
    var text = row.textContent.toLowerCase();
    return terms.every(function (term) { return text.indexOf(term) !== -1; });
  }

  function compare(key, a, b) {
    var x = a.getAttribute("data-" + key) || "";
    var y = b.getAttribute("data-" + key) || "";
    if (x === "" || y === "") return (x === "") - (y === "");  // missing values last
    if (numeric[key]) return parseFloat(x) - parseFloat(y);
    return collator.compare(x, y);
  }

  function apply(write) {
    var desc = state.sort.charAt(0) === "-";
    var key = desc ? state.sort.slice(1) : state.sort;
    var ordered = original.slice();
    if (key) {
      ordered.sort(function (a, b) {
        var missing = (a.getAttribute("data-" + key) || "") === "" ||
          (b.getAttribute("data-" + key) || "") === "";
        var c = compare(key, a, b);
        return desc && !missing ? -c : c;
      });
    }
    var shown = ordered.filter(matches);
    var size = parseInt(sizer.value, 10) || 0;
    var pages = size ? Math.max(1, Math.ceil(shown.length / size)) : 1;
    state.page = Math.min(Math.max(1, state.page), pages);
    var start = size ? (state.page - 1) * size : 0;
    var end = size ? Math.min(start + size, shown.length) : shown.length;
    var visible = new Set(shown.slice(start, end));
    ordered.forEach(function (row) {
      row.hidden = !visible.has(row);
      tbody.appendChild(row);
    });
    info.textContent = shown.length
      ? "Showing " + (start + 1) + "–" + end + " of " + shown.length + " matching results (" +
        original.length + " in all), page " + state.page + " of " + pages
      : "No result matches (" + original.length + " in all)";
    prev.disabled = state.page <= 1;
    next.disabled = state.page >= pages;
    headers.forEach(function (th) {
      var sorted = th.getAttribute("data-key") === key;
      th.setAttribute("aria-sort", sorted ? (desc ? "descending" : "ascending") : "none");
    });
    body.setAttribute("data-visible-rows", String(visible.size));
    body.setAttribute("data-matching-rows", String(shown.length));
    if (write) remember();
  }

  function remember() {
    var out = new URLSearchParams();
    filters.forEach(function (name) {
      if (selects[name] && selects[name].value) out.set(name, selects[name].value);
    });
    if (search.value.trim()) out.set("q", search.value.trim());
    if (state.sort) out.set("sort", state.sort);
    if (state.page > 1) out.set("page", String(state.page));
    if (sizer.value !== defaultSize) out.set("size", sizer.value);
    var query = out.toString();
    try {
      history.replaceState(null, "", (query ? "?" + query : location.pathname) + location.hash);
    } catch (e) { /* some browsers refuse history changes on file:// pages */ }
  }

  function refilter() { state.page = 1; apply(true); }
  filters.forEach(function (name) {
    if (selects[name]) selects[name].addEventListener("change", refilter);
  });
  search.addEventListener("input", refilter);
  sizer.addEventListener("change", refilter);
  prev.addEventListener("click", function () { state.page -= 1; apply(true); });
  next.addEventListener("click", function () { state.page += 1; apply(true); });
  headers.forEach(function (th) {
    var button = th.querySelector("button");
    button.addEventListener("click", function () {
      var key = th.getAttribute("data-key");
      state.sort = state.sort === key ? "-" + key : key;
      state.page = 1;
      apply(true);
    });
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "/" && document.activeElement !== search) {
      event.preventDefault();
      search.focus();
    }
  });
  controls.hidden = false;
  apply(false);
}());
