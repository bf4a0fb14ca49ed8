// Framework tabs. Twin code cells (myst-nb gives each cell the class tag_<tag>) stand
// next to each other, PyTorch first; this script puts each run of them behind one tab
// bar. The frameworks, their names and labels, are the book's framework table
// (tools/frameworks.py), which the Sphinx extension puts into every page as
// window.bookFrameworks. The choice is one for the whole book: kept in localStorage, set
// by ?framework=<name> in the URL, and applied from <head> (the class fw-<name> on
// <html>) so that the style hides the other framework's cells before the first paint.
// Each bar follows the WAI-ARIA tabs pattern: one Tab stop (the selected tab), Left/Right
// and Home/End move to another framework and select it, every tab names the cells it
// shows (aria-controls) and every cell the tab that labels it.
(function () {
  "use strict";
  var TABLE = window.bookFrameworks || [];
  var FRAMEWORKS = TABLE.map(function (f) { return f.name; });
  var LABELS = {};
  TABLE.forEach(function (f) { LABELS[f.name] = f.label; });
  if (!FRAMEWORKS.length) return;
  var KEY = "transformer-block-book.framework";
  var root = document.documentElement;

  function known(name) { return FRAMEWORKS.indexOf(name) >= 0 ? name : null; }
  function load() { try { return localStorage.getItem(KEY); } catch (e) { return null; } }
  function save(name) { try { localStorage.setItem(KEY, name); } catch (e) { /* storage off */ } }

  function apply(name) {
    FRAMEWORKS.forEach(function (f) { root.classList.toggle("fw-" + f, f === name); });
    document.querySelectorAll(".fw-tab").forEach(function (tab) {
      var on = tab.dataset.framework === name;
      tab.classList.toggle("fw-active", on);
      tab.setAttribute("aria-selected", on ? "true" : "false");
      tab.tabIndex = on ? 0 : -1;
    });
  }

  var fromUrl = known((new URLSearchParams(location.search).get("framework") || "").toLowerCase());
  if (fromUrl) save(fromUrl);
  root.classList.add("fw-js");
  apply(fromUrl || known(load()) || FRAMEWORKS[0]);

  function frameworkOf(el) {
    var tagged = FRAMEWORKS.filter(function (f) {
      return el.classList && el.classList.contains("cell") && el.classList.contains("tag_" + f);
    });
    return tagged.length === 1 ? tagged[0] : null;
  }

  function select(name, bar) {
    var before = bar.getBoundingClientRect().top;
    apply(name);
    save(name);
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
    var tabs = Array.prototype.slice.call(bar.querySelectorAll(".fw-tab"));
    var i = tabs.indexOf(event.target), move = MOVES[event.key];
    if (i < 0 || !move || event.altKey || event.ctrlKey || event.metaKey) return;
    event.preventDefault();
    var tab = tabs[move(i, tabs.length)];
    select(tab.dataset.framework, bar);
    tab.focus({ preventScroll: true });
  }

  // The cells of a group become the panels of its tabs: ids (kept when a cell has one),
  // role=tabpanel, labelled by their framework's tab.
  function tabBar(panels, number) {
    var bar = document.createElement("div");
    bar.className = "fw-tabbar";
    bar.setAttribute("role", "tablist");
    bar.setAttribute("aria-label", "Framework");
    FRAMEWORKS.filter(function (f) { return panels[f]; }).forEach(function (f) {
      var tab = document.createElement("button");
      tab.type = "button";
      tab.className = "fw-tab";
      tab.id = "fw-tab-" + number + "-" + f;
      tab.dataset.framework = f;
      tab.setAttribute("role", "tab");
      tab.textContent = LABELS[f];
      panels[f].forEach(function (cell, k) {
        cell.id = cell.id || "fw-panel-" + number + "-" + f + (k ? "-" + k : "");
        cell.setAttribute("role", "tabpanel");
        cell.setAttribute("aria-labelledby", tab.id);
      });
      tab.setAttribute("aria-controls", panels[f].map(function (cell) { return cell.id; }).join(" "));
      tab.addEventListener("click", function () { select(f, bar); });
      bar.appendChild(tab);
    });
    bar.addEventListener("keydown", function (event) { onKey(event, bar); });
    return bar;
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
    });
    apply(FRAMEWORKS.filter(function (f) { return root.classList.contains("fw-" + f); })[0]);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", group);
  else group();

  // Another window of the book changed the choice.
  window.addEventListener("storage", function (event) {
    if (event.key === KEY && known(event.newValue)) apply(event.newValue);
  });
})();
