// Framework tabs. Twin code cells (myst-nb gives each cell the class tag_<tag>) stand
// next to each other, PyTorch first; this script puts each run of them behind one tab
// bar. The choice is one for the whole book: kept in localStorage, set by
// ?framework=pytorch|jax in the URL, and applied from <head> (the class fw-<name> on
// <html>) so that frameworks.css hides the other framework's cells before the first paint.
(function () {
  "use strict";
  var LABELS = { pytorch: "PyTorch", jax: "JAX" };
  var FRAMEWORKS = Object.keys(LABELS);
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

  function tabBar(present) {
    var bar = document.createElement("div");
    bar.className = "fw-tabbar";
    bar.setAttribute("role", "tablist");
    FRAMEWORKS.filter(function (f) { return present[f]; }).forEach(function (f) {
      var tab = document.createElement("button");
      tab.type = "button";
      tab.className = "fw-tab";
      tab.dataset.framework = f;
      tab.setAttribute("role", "tab");
      tab.textContent = LABELS[f];
      tab.addEventListener("click", function () { select(f, bar); });
      bar.appendChild(tab);
    });
    return bar;
  }

  // A run starts at a tagged cell and takes the tagged cells that follow it; a PyTorch
  // cell after a JAX cell starts the next run. Runs with both frameworks get a tab bar.
  function group() {
    document.querySelectorAll("div.cell.tag_pytorch, div.cell.tag_jax").forEach(function (cell) {
      if (!frameworkOf(cell) || cell.parentElement.classList.contains("fw-group")) return;
      var run = [cell], present = {}, next = cell.nextElementSibling;
      present[frameworkOf(cell)] = true;
      while (next && frameworkOf(next) && !(frameworkOf(next) === FRAMEWORKS[0] && present[FRAMEWORKS[1]])) {
        present[frameworkOf(next)] = true;
        run.push(next);
        next = next.nextElementSibling;
      }
      if (!FRAMEWORKS.every(function (f) { return present[f]; })) return;
      var box = document.createElement("div");
      box.className = "fw-group";
      cell.parentElement.insertBefore(box, cell);
      box.appendChild(tabBar(present));
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
