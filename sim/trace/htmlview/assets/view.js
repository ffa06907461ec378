// view.js draws a cachelab run as a timeline from the JSON in the script
// element with id "run" (built by htmlview.build): a column per step, a lane per
// layer of the world and of each implementation, fault bands over the
// columns, and for the object in focus its chips highlighted and joined
// by arrows in the order it travelled. It loads nothing and sends
// nothing. Below the timeline, the object in focus has its story: one
// sentence per event about it, step by step, cachelab's and client-go's
// side by side. window.cachelabView says how the drawing went, for the
// browser test: {ready, renderMs, errors, cells, chips, draws}, and tells
// any object's story (story(key)).
"use strict";
(function () {
  var state = window.cachelabView = {ready: false, errors: [], renderMs: 0};
  window.addEventListener("error", function (e) { state.errors.push(String(e.message)); });

  var V = JSON.parse(document.getElementById("run").textContent);
  var COL = 200, LABEL = 150;   // px: a busy step's column, the lane labels
  var QUIET = 96, MIN = 56;     // px: a step with at most one short line a cell; the least a column gets
  var NARROW = 90;              // px: a column narrower than this wraps its chips' words rather than cut them
  var CHIPS = 8;                // a cell with more events shows a counted band
  var EXPANDED = 400;           // chips an expanded cell draws at most
  var IMPLS = ["world", "cachelab", "client-go"];
  var BASE = "without faults";  // an explored group's page: the scenario's run without faults (explored.go)
  if (V.lanes.some(function (l) { return l.impl === BASE; })) IMPLS.push(BASE);

  // An object is in focus once one is picked (a run of one object starts
  // with it): its chips are highlighted, joined by arrows, and its story
  // is told.
  // A story picked by the learner opens; the default one starts folded
  // to its title line, so that the timeline is whole at first.
  var ui = {focus: V.objects.length === 1 ? 0 : -1, storyOpen: false, match: null, hiddenLayers: {}, hiddenImpls: {}, expanded: {}};
  var stepCol = {};             // step number -> column index
  V.steps.forEach(function (s, i) { stepCol[s.n] = i; });
  var cellAt = {};              // "step/lane" -> cell
  V.cells.forEach(function (c) { cellAt[c.s + "/" + c.l] = c; });

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function count(n, what) { return thousands(n) + " " + what + (n === 1 ? "" : "s"); }
  function thousands(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ","); }
  function base(layer) { return layer.split("/")[0]; }

  // event i of cell c, whole again: its shape with its object put back.
  function event(c, i) {
    var e = c.e, o = e[i], sh = V.shapes[e[i + 1]], key = o < 0 ? "" : V.objects[o];
    var rv = e[i + 2], prev = e[i + 3];
    var text = key === "" ? sh[6] : sh[6].replace(/\{r\}|\{p\}|\{k\}/g, function (m) {
      return m === "{r}" ? key + "@" + rv : m === "{p}" ? key + "@" + prev : key;
    });
    return {obj: o, key: key, kind: sh[0], op: sh[1], watch: sh[2], handler: sh[3], initial: sh[4] === 1,
      order: sh[5], rv: rv, prevRV: prev, uid: e[i + 4] < 0 ? "" : V.uids[e[i + 4]], text: text};
  }
  function fill(t, key, rv, prev) {
    return t.replace(/\{(rv|prv|r|p|k)\}/g, function (m, f) {
      return f === "rv" ? rv : f === "prv" ? prev : f === "r" ? key + "@" + rv : f === "p" ? key + "@" + prev : key;
    });
  }

  // names reports whether text names the object key as key@rv, and not
  // as the tail of a longer key (trace.Names).
  function names(text, key) {
    for (var i = 0; ;) {
      var at = text.indexOf(key + "@", i);
      if (at < 0) return false;
      if (at === 0 || " {(,:[".indexOf(text.charAt(at - 1)) >= 0) return true;
      i = at + 1;
    }
  }

  // story is what each step did to the object key, as the text trace's
  // --object tells it (trace.StoryOf): [{step, cmd, world, cachelab,
  // clientGo}], each side a list of sentences, for the steps that did
  // something to it. Each step's events are read in the order they
  // happened (the step's q), one sentence each (the shape's story).
  function story(key) {
    var o = V.objects.indexOf(key), out = [];
    V.steps.forEach(function (s) {
      var st = {step: s.n, cmd: s.cmd, world: [], cachelab: [], clientGo: []}, told = false, next = {};
      var q = s.q || [];
      for (var j = 0; j < q.length; j += 2) {
        var li = q[j], c = cellAt[s.n + "/" + li], at = next[li] || 0;
        var side = {"world": st.world, "cachelab": st.cachelab, "client-go": st.clientGo}[V.lanes[li].impl];
        for (var k = 0; k < q[j + 1]; k++, at += 5) {
          var sh = V.shapes[c.e[at + 1]];
          if (!sh[7]) continue;
          if (sh[8] === 1 ? names(event(c, at).text, key) : c.e[at] === o) {
            side.push(fill(sh[7], key, c.e[at + 2], c.e[at + 3]));
            told = true;
          }
        }
        next[li] = at;
      }
      if (told) out.push(st);
    });
    return out;
  }
  state.story = story;

  // label is the words on an event's chip (chips.js), for a column of
  // width px (wide if not given).
  function label(ev, width) { return cachelabChips.label(ev, width); }

  // fullLine is the event as the text trace prints it, then its typed fields.
  function fullLine(c, ev) {
    var l = V.lanes[c.l], step = V.steps[stepCol[c.s]];
    var fields = ["kind=" + ev.kind];
    ["key", "uid", "rv", "prevRV", "watch", "handler", "op", "order"].forEach(function (f) {
      if (ev[f]) fields.push(f + "=" + ev[f]);
    });
    if (ev.initial) fields.push("initial=true");
    return "step " + c.s + " (" + step.pos + "): " + step.cmd + "\n[" + l.impl + "] " + (l.informer ? l.informer + " " : "") + l.layer +
      "  " + ev.text + "\n" + fields.join(" ");
  }

  // legend names the marks chips carry (chips.js), each with a sample.
  function legend() {
    var p = document.getElementById("legend");
    cachelabChips.legend.forEach(function (m) {
      var item = el("span", "item");
      item.appendChild(el("span", "sample" + (m[0] ? " " + m[0] : ""), m[1]));
      item.appendChild(document.createTextNode(" " + m[2]));
      p.appendChild(item);
    });
  }

  // stepLabel is a step's number as the page shows it: on an explored
  // group's page, the explored scenario's, or "+" for a fault explore
  // put in.
  function stepLabel(s) { return s.label || String(s.n); }

  // explored says, on an explored group's page, what was explored: the
  // scenario, where the faults went, how the steps are numbered, and what
  // the lanes without faults are.
  function explored() {
    var x = V.explored, p = document.getElementById("explored");
    if (!x) return;
    p.hidden = false;
    p.appendChild(el("b", "", "Explored: "));
    p.appendChild(document.createTextNode(x.scenario + " with " + x.placement + " · steps numbered as in " + x.scenario +
      ", + a fault explore put in · " + (x.baseline ? "lanes \"without faults\": " + x.scenario + "'s own run, to compare" :
        "its run without faults could not be had here (explore merge without the scenario at hand)")));
    p.title = x.scenario + ": " + x.title;
  }

  function meta() {
    legend();
    explored();
    var h = V.header;
    document.getElementById("meta").textContent = "cachelab " + h.cachelab + " vs client-go " + h.clientGo +
      " · stack " + h.stack + " · seed " + h.seed + " · server " + h.server + " · etcd " + h.etcd +
      " · " + count(V.steps.length, "step") + " · " + count(V.objects.length, "object") + (h.ids.length ? " · covers " + h.ids.join(" ") : "") +
      (h.plant ? " · planted bug in cachelab's side: " + h.plant + " (not cachelab's own behaviour)" : "");
    var v = document.getElementById("verdict"), d = V.divergence;
    if (!d) { v.className = "agree"; v.textContent = "✓ client-go agreed with cachelab at every step"; return; }
    v.className = "diverged";
    var a = el("a", "", "✗ first divergence: step " + d.step + " (" + d.cmd + "), layer " + d.layer);
    a.href = "#step-" + d.step;
    v.appendChild(a);
    v.appendChild(el("pre", "diff", d.diff));
  }

  function filters() {
    var impls = document.getElementById("impls"), layers = document.getElementById("layers");
    function box(parent, text, hidden) {
      var l = el("label", "toggle"), b = el("input");
      b.type = "checkbox"; b.checked = true;
      b.addEventListener("change", function () { hidden[text] = !b.checked; draw(); });
      l.appendChild(b); l.appendChild(document.createTextNode(text));
      parent.appendChild(l);
    }
    IMPLS.forEach(function (i) { box(impls, i, ui.hiddenImpls); });
    var seen = {};
    V.lanes.forEach(function (l) {
      var b = base(l.layer);
      if (!seen[b]) { seen[b] = true; box(layers, b, ui.hiddenLayers); }
    });
    var input = document.getElementById("object");
    input.addEventListener("input", function () { search(input.value); });
    document.getElementById("clear").addEventListener("click", function () {
      input.value = ""; search(""); hideDetail();
    });
    document.getElementById("close-detail").addEventListener("click", hideDetail);
    document.getElementById("close-story").addEventListener("click", function () { focus(-1); });
    document.getElementById("fold-story").addEventListener("click", function () { ui.storyOpen = !ui.storyOpen; tell(); });
    document.addEventListener("keydown", function (e) { if (e.key === "Escape") { hideDetail(); focus(-1); } });
  }

  // search keeps the objects whose key contains q; one match (or an exact
  // one) is put in focus, so its journey is drawn.
  function search(q) {
    var list = document.getElementById("objects"), out = document.getElementById("matches");
    list.textContent = "";
    if (q === "") { ui.match = null; out.textContent = ""; ui.focus = -1; draw(); return; }
    var m = {}, n = 0, exact = -1;
    V.objects.forEach(function (k, i) {
      if (k.indexOf(q) < 0) return;
      m[i] = true; n++;
      if (k === q) exact = i;
      if (n <= 50) { var o = el("option"); o.value = k; list.appendChild(o); }
    });
    ui.match = m;
    out.textContent = n + (n === 1 ? " object" : " objects");
    ui.focus = exact >= 0 ? exact : n === 1 ? +Object.keys(m)[0] : -1;
    ui.storyOpen = true;
    draw();
  }

  function focus(o) {
    ui.focus = o;
    ui.storyOpen = true;
    draw();
  }

  function hideDetail() { document.getElementById("detail").hidden = true; }
  function showDetail(text) {
    document.getElementById("line").textContent = text;
    document.getElementById("detail").hidden = false;
  }

  function visibleLanes() {
    var out = [];
    V.lanes.forEach(function (l, i) {
      if (!ui.hiddenImpls[l.impl] && !ui.hiddenLayers[base(l.layer)]) out.push(i);
    });
    return out;
  }

  function chip(c, i, ev) {
    var marks = cachelabChips.marks(ev);
    var b = el("button", "chip k-" + ev.kind + (marks.length ? " " + marks.join(" ") : ""), label(ev, colW[stepCol[c.s]]));
    b.type = "button";
    b.title = fullLine(c, ev);
    b.dataset.obj = ev.obj;
    if (ui.focus >= 0) b.className += ev.obj === ui.focus ? " on" : " dim";
    b.addEventListener("click", function (e) {
      e.stopPropagation();
      showDetail(fullLine(c, ev));
      if (ev.obj >= 0) focus(ev.obj);
    });
    return b;
  }

  // band is a cell's events counted: how many, of how many objects, by op
  // (an update that changed nothing counted apart from one that did), a
  // line for each controller's operations (two controllers can share an
  // informer: each says whose they are).
  function band(c, idx) {
    var objs = {}, nobj = 0, by = {};
    idx.forEach(function (i) {
      var o = c.e[i], sh = V.shapes[c.e[i + 1]], op = sh[1] || sh[0];
      var who = sh[3] && (sh[0] === "workqueue" || sh[0] === "reconcile") ? sh[3] : "";
      if (c.e[i + 2] && c.e[i + 2] === c.e[i + 3]) op += " (unchanged)";
      if (o >= 0 && !objs[o]) { objs[o] = true; nobj++; }
      var ops = by[who] = by[who] || {};
      ops[op] = (ops[op] || 0) + 1;
    });
    var lines = Object.keys(by).sort().map(function (who) { return (who ? who + ": " : "") + counted(by[who]); });
    var b = el("button", "band", count(idx.length, "event") + " · " + count(nobj, "object") + "\n" + lines.join("\n"));
    b.type = "button";
    b.title = "click to show them (at most " + EXPANDED + "), or filter by object";
    b.addEventListener("click", function () { ui.expanded[c.s + "/" + c.l] = true; draw(); });
    return b;
  }

  // counted says how many of each op: "add ×1 · get ×2", or, when each
  // came as often, "add·done·get ×2".
  function counted(ops) {
    var names = Object.keys(ops).sort(), n = ops[names[0]];
    if (names.length > 1 && names.every(function (op) { return ops[op] === n; })) return names.join("·") + " ×" + thousands(n);
    return names.map(function (op) { return op + " ×" + thousands(ops[op]); }).join(" · ");
  }

  // visibleEvents is the offsets in c.e of the events the object filter
  // lets through.
  function visibleEvents(c) {
    var idx = [];
    for (var i = 0; i < c.e.length; i += 5) {
      if (ui.match && !(c.e[i] >= 0 && ui.match[c.e[i]])) continue;
      idx.push(i);
    }
    return idx;
  }

  // rare is the events of a cell that are unlike every other in it: the
  // only one of its shape (the one real update among thousands of
  // unchanged ones, the bookmark that ends the initial events), and every
  // tombstone. A band keeps them as chips under it, as the text trace keeps
  // such lines (issue 29); none if there are more than RARE.
  var RARE = 8;
  function rare(c, idx) {
    var n = {};
    idx.forEach(function (i) { n[c.e[i + 1]] = (n[c.e[i + 1]] || 0) + 1; });
    var out = idx.filter(function (i) { return n[c.e[i + 1]] === 1 || V.shapes[c.e[i + 1]][5] === "tombstones"; });
    return out.length <= RARE ? out : [];
  }

  function fillCell(div, c) {
    var idx = visibleEvents(c);
    if (idx.length === 0) return 0;
    var open = ui.expanded[c.s + "/" + c.l] || ui.match && idx.length <= EXPANDED;
    if (idx.length > CHIPS && !open) {
      var keep = rare(c, idx), kept = {};
      keep.forEach(function (i) { kept[i] = true; });
      div.appendChild(band(c, idx.filter(function (i) { return !kept[i]; })));
      keep.forEach(function (i) { div.appendChild(chip(c, i, event(c, i))); });
      return keep.length;
    }
    var shown = idx.slice(0, EXPANDED);
    shown.forEach(function (i) { div.appendChild(chip(c, i, event(c, i))); });
    if (idx.length > shown.length) div.appendChild(el("span", "more", "+" + thousands(idx.length - shown.length) + " more: filter by object"));
    return shown.length;
  }

  // layout sizes each step's column by what it holds (a quiet step, at
  // most one short line in any visible cell, is narrow; a busy one wide)
  // and then, if the run is wider than the window, narrows the widest
  // columns first, all to one width, until the whole run fits (issue 29),
  // but never below MIN: their chips are cut short, and a click shows the
  // whole line. colLeft[i] is column i's left edge.
  var colW = [], colLeft = [];
  function layout(lanes, viewWidth) {
    var want = V.steps.map(function (s) {
      var quiet = lanes.every(function (li) {
        var c = cellAt[s.n + "/" + li];
        if (!c) return true;
        var idx = visibleEvents(c);
        return idx.length === 0 || idx.length === 1 && label(event(c, idx[0])).length <= 12;
      });
      return quiet ? QUIET : COL;
    });
    var room = viewWidth - LABEL - 2, cap = COL;
    var sorted = want.slice().sort(function (a, b) { return a - b; }), used = 0;
    for (var i = 0; i < sorted.length; i++) {
      var share = Math.floor((room - used) / (sorted.length - i));
      if (share < sorted[i]) { cap = Math.max(MIN, share); break; }
      used += sorted[i];
    }
    colW = want.map(function (w) { return Math.min(w, cap); });
    var at = LABEL;
    colLeft = colW.map(function (w) { var l = at; at += w; return l; });
    return at;
  }
  function span(from, to) { return colLeft[stepCol[to]] + colW[stepCol[to]] - colLeft[stepCol[from]]; }

  // draw draws the timeline for the window's width. Drawn, a page taller
  // than the window gains a scrollbar, which takes from that width: it
  // is drawn again, once, for the width that is left.
  // The width is read before the timeline is emptied, which would take
  // the scrollbar away with it.
  function draw() {
    var before = document.documentElement.clientWidth;
    drawOnce(before);
    var after = document.documentElement.clientWidth;
    if (after < before) drawOnce(after);
  }

  function drawOnce(viewWidth) {
    var t0 = performance.now();
    var main = document.getElementById("timeline");
    main.textContent = "";
    var width = layout(visibleLanes(), viewWidth);
    var grid = el("div", "grid");
    grid.style.width = width + "px";
    main.appendChild(grid);

    var head = el("div", "row head");
    head.appendChild(el("div", "label", "step"));
    V.steps.forEach(function (s) {
      var h = el("div", "step" + (s.agree ? "" : " diverged") + (colW[stepCol[s.n]] < NARROW ? " narrow" : ""));
      h.style.width = h.style.flexBasis = colW[stepCol[s.n]] + "px";
      h.id = "step-" + s.n;
      h.appendChild(el("b", s.label === "+" ? "put-in" : "", stepLabel(s) + " "));
      h.appendChild(el("code", "", s.cmd));
      h.title = s.pos + ": " + s.cmd + (s.label === "+" ? " (a fault explore put in)" : s.label ? " (step " + s.n + " of this file)" : "");
      head.appendChild(h);
    });
    grid.appendChild(head);
    grid.appendChild(faultRow());

    // Two groups: the world's lanes, then each layer's lanes of the two
    // implementations, cachelab's right above client-go's, so that one
    // look down a step's column compares them (issue 47).
    var chips = 0, group = "", pair = "", d = V.divergence;
    visibleLanes().forEach(function (li) {
      var l = V.lanes[li], g = l.impl === "world" ? "world" : "sides";
      if (g !== group) {
        group = g;
        // The group's name stays in view when the page scrolls sideways:
        // a row as wide as the run cannot stick, a name inside it can.
        var gr = el("div", "row group");
        gr.appendChild(el("span", "group-name", g === "world" ? "the world (etcd, kube-apiserver's cache, the simulator)" :
          "cachelab and client-go, layer by layer: cachelab's lane above client-go's"));
        grid.appendChild(gr);
      }
      var first = l.impl === "world" || l.layer + "|" + (l.informer || "") !== pair;
      pair = l.layer + "|" + (l.informer || "");
      var row = el("div", "row lane impl-" + l.impl.replace(/\s+/g, "-") + (first ? " pair" : ""));
      var label = el("div", "label l-" + base(l.layer));
      label.appendChild(el("span", "layer", l.layer));
      if (l.impl !== "world") label.appendChild(el("span", "side", l.impl));
      if (l.informer) label.appendChild(el("span", "informer", l.informer));
      row.appendChild(label);
      V.steps.forEach(function (s) {
        var div = el("div", "cell" + (colW[stepCol[s.n]] < NARROW ? " narrow" : ""));
        div.style.width = div.style.flexBasis = colW[stepCol[s.n]] + "px";
        div.dataset.step = s.n; div.dataset.lane = li;
        if (d && d.step === s.n && d.layer === l.layer && l.impl !== "world" && l.impl !== BASE) div.className += " diverged";
        var c = cellAt[s.n + "/" + li];
        if (c) chips += fillCell(div, c);
        row.appendChild(div);
      });
      grid.appendChild(row);
    });
    grid.appendChild(bands());
    arrows(grid);
    tell();
    state.cells = grid.querySelectorAll(".cell").length;
    state.chips = chips;
    state.lastDrawMs = performance.now() - t0;
    state.draws = (state.draws || 0) + 1;
  }

  // faultRow names each fault band above the lanes; bands draws them as
  // shading over their columns. Overlapping bands take separate tracks.
  function faultRow() {
    var row = el("div", "row faults"), ends = [];
    row.appendChild(el("div", "label", "faults"));
    V.faults.forEach(function (f) {
      var t = 0;
      while (ends[t] !== undefined && ends[t] >= f.from) t++;
      ends[t] = f.to;
      var b = el("div", "fault f-" + f.kind.split(" ")[0], f.kind);
      b.style.left = colLeft[stepCol[f.from]] + "px";
      b.style.width = span(f.from, f.to) - 4 + "px";
      b.style.top = 2 + t * 20 + "px";
      b.title = f.kind + ": steps " + f.from + "–" + f.to + " (" + f.cmd + ")";
      row.appendChild(b);
    });
    row.style.height = Math.max(1, ends.length) * 20 + 4 + "px";
    return row;
  }

  function bands() {
    var layer = el("div", "bands");
    V.faults.forEach(function (f) {
      var b = el("div", "shade f-" + f.kind.split(" ")[0]);
      b.style.left = colLeft[stepCol[f.from]] + "px";
      b.style.width = span(f.from, f.to) + "px";
      layer.appendChild(b);
    });
    return layer;
  }

  // arrows joins the chips of the object in focus, and no others, in the
  // order it travelled: step by step, and in a step from the world down
  // each implementation's lanes. Each implementation is its own path.
  function arrows(grid) {
    if (ui.focus < 0) return;
    var objs = [ui.focus];
    var svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    svg.setAttribute("class", "arrows");
    svg.setAttribute("width", grid.scrollWidth);
    svg.setAttribute("height", grid.scrollHeight);
    svg.innerHTML = '<defs><marker id="head" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="6" markerHeight="6" orient="auto">' +
      '<path d="M0,0 L8,4 L0,8 z" fill="context-stroke"/></marker></defs>';
    var g0 = grid.getBoundingClientRect();
    var byObj = {};
    grid.querySelectorAll(".chip").forEach(function (b) {
      var o = +b.dataset.obj;
      if (o < 0 || objs.indexOf(o) < 0) return;
      var cell = b.parentNode, r = b.getBoundingClientRect();
      (byObj[o] = byObj[o] || []).push({step: +cell.dataset.step, lane: +cell.dataset.lane,
        x: r.left - g0.left, y: r.top - g0.top + r.height / 2, w: r.width, h: r.height});
    });
    Object.keys(byObj).forEach(function (o) {
      var pts = byObj[o];
      ["cachelab", "client-go"].forEach(function (impl) {
        var path = pts.filter(function (p) { var i = V.lanes[p.lane].impl; return i === "world" || i === impl; });
        path.sort(function (a, b) { return a.step - b.step || a.lane - b.lane; });
        for (var i = 1; i < path.length; i++) {
          // From the edge of one chip to the edge of the next, under the
          // chips, so that no arrow covers a chip's words: down from its
          // bottom to the next one's top, up from its top, or along the
          // row from its right side to the next one's left.
          var a = path[i - 1], b = path[i], x1 = a.x + a.w / 2, x2 = b.x + b.w / 2, y1, y2, d;
          if (Math.abs(a.y - b.y) < 2) {
            x1 = a.x + a.w; x2 = b.x; y1 = y2 = a.y;
            d = "M" + x1 + "," + y1 + " L" + x2 + "," + y2;
          } else {
            if (b.y > a.y) { y1 = a.y + a.h / 2; y2 = b.y - b.h / 2; } else { y1 = a.y - a.h / 2; y2 = b.y + b.h / 2; }
            if (b.step !== a.step) x2 = b.x + Math.min(12, b.w / 2);
            d = "M" + x1 + "," + y1 + " C" + x1 + "," + (y1 + y2) / 2 + " " + x2 + "," + (y1 + y2) / 2 + " " + x2 + "," + y2;
          }
          var p = document.createElementNS("http://www.w3.org/2000/svg", "path");
          p.setAttribute("d", d);
          p.setAttribute("class", "arrow a-" + impl);
          p.setAttribute("marker-end", "url(#head)");
          svg.appendChild(p);
        }
      });
    });
    grid.appendChild(svg);
  }

  // tell shows the story of the object in focus in the drawer below the
  // timeline: a row per step that did something to it, with the world's
  // sentences and each side's; a row where the two sides differ is
  // marked. A step's number scrolls the timeline to its column.
  var toldFor = -2;
  function tell() {
    var sec = document.getElementById("story");
    document.body.classList.toggle("story-open", ui.focus >= 0 && ui.storyOpen);
    document.body.classList.toggle("story-folded", ui.focus >= 0 && !ui.storyOpen);
    sec.hidden = ui.focus < 0;
    sec.classList.toggle("folded", !ui.storyOpen);
    document.getElementById("fold-story").textContent = ui.storyOpen ? "▾ fold" : "▸ read it";
    if (ui.focus < 0 || toldFor === ui.focus) return;
    toldFor = ui.focus;
    var key = V.objects[ui.focus], steps = story(key), rows = document.getElementById("story-rows");
    document.getElementById("story-key").textContent = key;
    document.getElementById("story-count").textContent = "· " + count(steps.length, "step") +
      " did something to it · click a chip for its whole line, Esc to close";
    rows.textContent = "";
    function list(td, sentences) {
      if (sentences.length === 0) { td.appendChild(el("span", "none", "—")); return; }
      var ul = el("ul");
      sentences.forEach(function (t) { ul.appendChild(el("li", "", t)); });
      td.appendChild(ul);
    }
    steps.forEach(function (st) {
      var differ = st.cachelab.join("\n") !== st.clientGo.join("\n");
      var tr = el("tr", differ ? "differ" : ""), n = el("td", "n"), a = el("a", "", "step " + stepLabel(V.steps[stepCol[st.step]]));
      a.href = "#step-" + st.step;
      a.addEventListener("click", function (e) {
        e.preventDefault();
        var h = document.getElementById("step-" + st.step);
        if (h) h.scrollIntoView({inline: "center", block: "nearest"});
      });
      n.appendChild(a);
      n.appendChild(el("div", "", st.cmd));
      // What the world was like: the fault bands over this step (a band
      // that a later step closes, such as a reconnect, is over by then).
      V.faults.forEach(function (f) {
        if (f.from <= st.step && (st.step < f.to || st.step === f.from)) n.appendChild(el("div", "while f-" + f.kind.split(" ")[0], f.kind));
      });
      tr.appendChild(n);
      [st.world, st.cachelab, st.clientGo].forEach(function (s, i) {
        var td = el("td", i === 0 ? "" : "side");
        list(td, s);
        tr.appendChild(td);
      });
      rows.appendChild(tr);
    });
    if (steps.length === 0) {
      var tr = el("tr"), td = el("td", "none", "no step did anything to " + key);
      td.colSpan = 4; tr.appendChild(td); rows.appendChild(tr);
    }
  }

  // The columns fit the window: a resize draws them again.
  var resized = 0;
  window.addEventListener("resize", function () {
    clearTimeout(resized);
    resized = setTimeout(draw, 100);
  });

  try {
    meta();
    filters();
    draw();
  } catch (e) {
    state.errors.push(String(e && e.stack || e));
    throw e;
  } finally {
    state.renderMs = performance.now();
    state.ready = true;
  }
})();
