// Framework tabs. Twin code cells (myst-nb gives each cell the class tag_<tag>) stand
// next to each other, PyTorch first; this script puts each run of them behind one tab
// bar. The frameworks, their names and labels, are the book's framework table
// (tools/frameworks.py), which the Sphinx extension puts into every page as
// window.bookFrameworks. Each bar offers every framework and, on a window at least
// SIDE_BY_SIDE_MIN px wide (a 79-character line of code in each column above 0.75rem,
// with both sidebars folded; the arithmetic is in frameworks.css), "Both": the
// frameworks side by side, one column each. A narrower window offers no "Both"; where it
// was chosen, the window shows the framework chosen alone last, with its tab selected,
// until it is wide enough again. Side by side, on a page with twin cells (the page's
// window.bookTwinCells, tools/site/ext/framework_css.py), the navigation is folded away
// as the theme's button folds it (the theme's class on the sidebar), and comes back
// when the columns go, unless the reader had folded it; the button opens it again
// meanwhile.
// The choice is one for the whole book: kept in localStorage, set by ?framework=<choice>
// in the URL, and applied from <head> so that the style shows the chosen cells before the
// first paint. <html> carries the class fw-<name> of the framework shown alone (also
// under "Both": the one that a narrow window and paper show), fw-both while "Both" is
// chosen, fw-side while the columns show, fw-twins on a page with twin cells and fw-ready
// once the page's groups are made.
// Each bar follows the WAI-ARIA tabs pattern: one Tab stop (the selected tab), Left/Right
// and Home/End move to another choice and select it, every tab names the cells it shows
// (aria-controls; "Both" names them all) and every cell the tab of its framework.
(function () {
  "use strict";
  var TABLE = window.bookFrameworks || [];
  var FRAMEWORKS = TABLE.map(function (f) { return f.name; });
  var LABELS = {};
  TABLE.forEach(function (f) { LABELS[f.name] = f.label; });
  if (!FRAMEWORKS.length) return;
  var BOTH = "both";
  var CHOICES = FRAMEWORKS.concat([BOTH]);
  LABELS[BOTH] = "Both";
  var SIDE_BY_SIDE_MIN = 1440;
  var WIDE = window.matchMedia("(min-width: " + SIDE_BY_SIDE_MIN + "px)");
  var KEY = "transformer-block-book.framework";
  var ALONE_KEY = KEY + ".alone";  // the framework "Both" shows on a narrow window
  var root = document.documentElement;
  var TWIN_CELLS = window.bookTwinCells === true;
  var choice;
  var SIDEBAR_HIDDEN = "pst-sidebar-hidden";  // the theme's class of a folded navigation
  var sidebarSide = false;  // whether the navigation was last set for the columns
  var sidebarFolded = false;  // whether the columns folded it (and so unfold it)

  function known(name, among) { return (among || CHOICES).indexOf(name) >= 0 ? name : null; }
  function load(key) { try { return localStorage.getItem(key); } catch (e) { return null; } }
  function save(key, name) { try { localStorage.setItem(key, name); } catch (e) { /* storage off */ } }
  function alone() { return known(load(ALONE_KEY), FRAMEWORKS) || FRAMEWORKS[0]; }

  // Fold the navigation when the columns come (once: the reader may open it again), and
  // unfold it when they go, if it was folded for them. Nothing before the page is parsed:
  // the style folds it until then (frameworks.css).
  function foldNavigation(side) {
    var sidebar = document.getElementById("pst-primary-sidebar");
    if (!sidebar || side === sidebarSide) return;
    sidebarSide = side;
    if (side && !sidebar.classList.contains(SIDEBAR_HIDDEN)) {
      sidebar.classList.add(SIDEBAR_HIDDEN);
      sidebarFolded = true;
    } else if (!side && sidebarFolded) {
      sidebar.classList.remove(SIDEBAR_HIDDEN);
      sidebarFolded = false;
    }
  }

  function apply(name) {
    choice = name;
    var shown = choice === BOTH ? alone() : choice;
    var side = choice === BOTH && WIDE.matches;
    var selected = choice === BOTH && !side ? shown : choice;
    FRAMEWORKS.forEach(function (f) { root.classList.toggle("fw-" + f, f === shown); });
    root.classList.toggle("fw-both", choice === BOTH);
    root.classList.toggle("fw-side", side);
    if (root.classList.contains("fw-ready")) foldNavigation(side && TWIN_CELLS);
    document.querySelectorAll(".fw-tab").forEach(function (tab) {
      var on = tab.dataset.choice === selected;
      if (tab.dataset.choice === BOTH) tab.hidden = !WIDE.matches;
      tab.classList.toggle("fw-active", on);
      tab.setAttribute("aria-selected", on ? "true" : "false");
      tab.tabIndex = on ? 0 : -1;
    });
  }

  function choose(name) {
    save(KEY, name);
    if (name !== BOTH) save(ALONE_KEY, name);
    apply(name);
  }

  var fromUrl = known((new URLSearchParams(location.search).get("framework") || "").toLowerCase());
  root.classList.add("fw-js");
  root.classList.toggle("fw-twins", TWIN_CELLS);
  choose(fromUrl || known(load(KEY)) || FRAMEWORKS[0]);

  function frameworkOf(el) {
    var tagged = FRAMEWORKS.filter(function (f) {
      return el.classList && el.classList.contains("cell") && el.classList.contains("tag_" + f);
    });
    return tagged.length === 1 ? tagged[0] : null;
  }

  function select(name, bar) {
    var before = bar.getBoundingClientRect().top;
    choose(name);
    var url = new URL(location.href);
    if (url.searchParams.has("framework")) {
      url.searchParams.set("framework", name);
      history.replaceState(history.state, "", url);
    }
    var shift = bar.getBoundingClientRect().top - before;
    if (shift) window.scrollTo({ top: window.scrollY + shift, left: window.scrollX, behavior: "instant" });
  }

  // Arrow keys wrap around; Home and End go to the first and the last tab.
  var MOVES = {
    ArrowLeft: function (i, n) { return (i + n - 1) % n; },
    ArrowRight: function (i, n) { return (i + 1) % n; },
    Home: function () { return 0; },
    End: function (i, n) { return n - 1; },
  };

  function onKey(event, bar) {
    var tabs = Array.prototype.slice.call(bar.querySelectorAll(".fw-tab:not([hidden])"));
    var i = tabs.indexOf(event.target), move = MOVES[event.key];
    if (i < 0 || !move || event.altKey || event.ctrlKey || event.metaKey) return;
    event.preventDefault();
    var tab = tabs[move(i, tabs.length)];
    select(tab.dataset.choice, bar);
    tab.focus({ preventScroll: true });
  }

  function tab(name, number, panels, bar) {
    var button = document.createElement("button");
    button.type = "button";
    button.className = "fw-tab";
    button.id = "fw-tab-" + number + "-" + name;
    button.dataset.choice = name;
    button.setAttribute("role", "tab");
    button.setAttribute("aria-controls", panels.map(function (cell) { return cell.id; }).join(" "));
    button.textContent = LABELS[name];
    button.addEventListener("click", function () { select(name, bar); });
    return button;
  }

  // The cells of a group become the panels of its tabs: ids (kept when a cell has one),
  // role=tabpanel, labelled by their framework's tab. "Both" controls every panel.
  function tabBar(panels, number) {
    var bar = document.createElement("div");
    bar.className = "fw-tabbar";
    bar.setAttribute("role", "tablist");
    bar.setAttribute("aria-label", "Framework");
    var all = [];
    FRAMEWORKS.forEach(function (f) {
      panels[f].forEach(function (cell, k) {
        cell.id = cell.id || "fw-panel-" + number + "-" + f + (k ? "-" + k : "");
        cell.setAttribute("role", "tabpanel");
        cell.setAttribute("aria-labelledby", "fw-tab-" + number + "-" + f);
        all.push(cell);
      });
      bar.appendChild(tab(f, number, panels[f], bar));
    });
    bar.appendChild(tab(BOTH, number, all, bar));
    bar.addEventListener("keydown", function (event) { onKey(event, bar); });
    return bar;
  }

  // A cell whose source is hidden behind a toggle (hide-input) opens and closes with its
  // twins, so that side by side their lines stay level.
  function syncToggles(box) {
    box.addEventListener("toggle", function (event) {
      var details = event.target, cell = details.closest("div.cell");
      if (!cell || cell.parentElement !== box) return;
      var k = Array.prototype.indexOf.call(cell.querySelectorAll("details"), details);
      box.querySelectorAll(":scope > div.cell").forEach(function (other) {
        var twin = other.querySelectorAll("details")[k];
        if (twin && twin.open !== details.open) twin.open = details.open;
      });
    }, true);
  }

  // Twins whose code is the same, line for line (a cell that only calls the library, say):
  // side by side, the style shows the code once across both columns and each framework's
  // outputs in its column (fw-same-code; fw-code-only where neither has outputs). Folded
  // cells keep their two boxes.
  function markSameCode(box, run) {
    if (run.length !== FRAMEWORKS.length) return;
    var codes = run.map(function (cell) {
      var pre = cell.querySelector(":scope > div.cell_input pre");
      return pre ? pre.textContent : null;
    });
    if (codes[0] === null || codes.some(function (code) { return code !== codes[0]; })) return;
    box.classList.add("fw-same-code");
    if (!run.some(function (cell) { return cell.querySelector(":scope > div.cell_output"); })) {
      box.classList.add("fw-code-only");
    }
  }

  // An output's HTML, less what the page's scripts add to it (copy buttons, ids).
  function outputHtml(output) {
    var copy = output.cloneNode(true);
    copy.querySelectorAll(".copybtn").forEach(function (button) { button.remove(); });
    copy.querySelectorAll("[id]").forEach(function (el) { el.removeAttribute("id"); });
    return copy.innerHTML;
  }

  // Twins whose outputs are the same, the code apart (both print the same text): side by
  // side, each framework's code in its column and the outputs once, across both columns
  // (fw-same-output). Outputs inside a fold (hide-cell) keep their columns.
  function markSameOutput(box, run) {
    if (run.length !== FRAMEWORKS.length) return;
    var outputs = run.map(function (cell) {
      var output = cell.querySelector(":scope > div.cell_output");
      return output ? outputHtml(output) : null;
    });
    if (outputs[0] === null || outputs.some(function (html) { return html !== outputs[0]; })) return;
    box.classList.add("fw-same-output");
  }

  // Twins folded whole (hide-cell: the code and its outputs behind one toggle): side by
  // side, one toggle for the pair while closed (fw-folded).
  function markFolded(box, run) {
    var folded = run.every(function (cell) {
      return cell.querySelector(":scope > details.hide") &&
        !cell.querySelector(":scope > div.cell_input, :scope > div.cell_output");
    });
    if (folded) box.classList.add("fw-folded");
  }

  // A run starts at a tagged cell and takes the tagged cells that follow it; a cell of
  // a framework earlier in the table (a PyTorch cell after a JAX cell) starts the next
  // run. Runs with every framework get a tab bar.
  function group() {
    var groups = 0;
    var tagged = FRAMEWORKS.map(function (f) { return "div.cell.tag_" + f; }).join(", ");
    document.querySelectorAll(tagged).forEach(function (cell) {
      if (!frameworkOf(cell) || cell.parentElement.classList.contains("fw-group")) return;
      var run = [cell], panels = {}, next = cell.nextElementSibling;
      panels[frameworkOf(cell)] = [cell];
      while (next && frameworkOf(next) &&
             FRAMEWORKS.indexOf(frameworkOf(next)) >= FRAMEWORKS.indexOf(frameworkOf(run[run.length - 1]))) {
        (panels[frameworkOf(next)] = panels[frameworkOf(next)] || []).push(next);
        run.push(next);
        next = next.nextElementSibling;
      }
      if (!FRAMEWORKS.every(function (f) { return panels[f]; })) return;
      var box = document.createElement("div");
      box.className = "fw-group";
      cell.parentElement.insertBefore(box, cell);
      box.appendChild(tabBar(panels, ++groups));
      run.forEach(function (c) { box.appendChild(c); });
      markSameCode(box, run);
      markSameOutput(box, run);
      markFolded(box, run);
      syncToggles(box);
    });
    root.classList.add("fw-ready");
    apply(choice);
  }

  // The theme wires its sidebar buttons by the first of each kind on the page, the
  // header's, which a wide window hides: the article header's buttons, which it shows
  // there (the page's contents' too while the columns show), pass their clicks on to
  // those, so that they fold and unfold the navigation and open the contents.
  function forwardSidebarButtons() {
    ["primary-toggle", "secondary-toggle"].forEach(function (kind) {
      var first = document.querySelector("." + kind);
      document.querySelectorAll(".bd-header-article ." + kind).forEach(function (button) {
        if (button === first) return;
        button.addEventListener("click", function (event) {
          event.preventDefault();
          first.click();
        });
      });
    });
  }

  function ready() {
    forwardSidebarButtons();
    group();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", ready);
  else ready();

  // The window became wider or narrower than the side-by-side view needs.
  WIDE.addEventListener("change", function () { apply(choice); });

  // Another window of the book changed the choice.
  window.addEventListener("storage", function (event) {
    if (event.key === KEY && known(event.newValue)) apply(event.newValue);
    if (event.key === ALONE_KEY && choice === BOTH) apply(choice);
  });
})();
