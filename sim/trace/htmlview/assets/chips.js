// chips.js words and marks the timeline's chips (view.js draws them): the
// few words of an event a learner needs without a click, and the marks
// for the distinctions the workshop's chapters teach, which a legend
// names: an update that changed nothing (no-op) against a real one, a
// tombstone (DeletedFinalStateUnknown) against a delete, a 410 (the
// watch's resourceVersion compacted away: relist) against other errors.
// Every line between kube-apiserver and the reflector names its watch
// (w1, w2...) or says LIST. The whole line shows on click.
"use strict";
var cachelabChips = (function () {
  // The words of the HTTP statuses a run meets.
  var STATUS = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 409: "Conflict",
    410: "Gone", 422: "Invalid", 429: "Too Many Requests", 500: "Internal Error", 503: "Unavailable", 504: "Timeout"};
  function status(code) { return code + (STATUS[code] ? " " + STATUS[code] : ""); }
  function name(key) { var i = key.indexOf("/"); return i < 0 ? key : key.slice(i + 1); }
  function cut(s, most) { return s.length > most ? s.slice(0, most - 1) + "…" : s; }

  // errorCode is the 4xx or 5xx status an event reports, or "".
  function errorCode(ev) {
    var m = null;
    switch (ev.kind) {
      case "event": if (ev.op === "ERROR") m = /ERROR ([45]\d\d)\b/.exec(ev.text); break;
      case "request": if (ev.op === "answer") m = /->\s*([45]\d\d)\b/.exec(ev.text); break;
      case "wire": m = /^\S+ \S+ ([45]\d\d)\b/.exec(ev.text); break;
      case "reflector": m = /: ([45]\d\d) [A-Z]/.exec(ev.text); break;
    }
    return m ? m[1] : "";
  }
  function isNoop(ev) { return ev.kind === "call" && ev.op === "OnUpdate" && ev.rv !== "" && ev.rv === ev.prevRV; }
  function isTombstone(ev) { return ev.order === "tombstones" || /DeletedFinalStateUnknown/.test(ev.text); }

  // marks is the classes that set an event's chip apart: noop, tomb, err
  // and e410 (a 410 is an err too).
  function marks(ev) {
    var m = [], code = errorCode(ev);
    if (isNoop(ev)) m.push("noop");
    if (isTombstone(ev)) m.push("tomb");
    if (code) m.push("err");
    if (code === "410") m.push("e410");
    return m;
  }

  // label is the words on an event's chip in a column width px wide (a
  // wide one if not given). A line in words of its own (the world's, a
  // note's) keeps what fits in two lines of the column: all of it is a
  // click away, and a chip of four lines would make the page a screen
  // taller.
  function label(ev, width) {
    var who = ev.handler && (ev.kind === "reconcile" || ev.kind === "workqueue") ? ev.handler + ": " : "";
    // The lane says "reconcile": the chip says of what, and how it went.
    if (ev.kind === "reconcile" && ev.key) return who + name(ev.key) + " → " + reconcileOutcome(ev.text);
    if (ev.kind === "workqueue" && ev.key) {
      var d = / in (\S+) \(/.exec(ev.text); // requeue web in 5ms (rate-limited), after web in 1s (requeue-after)
      return who + ev.op + " " + name(ev.key) + (d ? " " + d[1] : "");
    }
    var words = {event: watchEvent, "watch-end": watchEnd, request: request, wire: wire, reflector: reflector}[ev.kind];
    var w = words ? words(ev) : "";
    if (w) return w;
    if (ev.key) return object(ev);
    var most = width ? Math.max(16, Math.min(40, 2 * Math.floor((width - 16) / 6.7))) : 40;
    return cut(ev.text.trim().split(" (")[0], most);
  }

  // object is op key@rv, an update as key@prev→rv or marked no-op, a
  // tombstone marked.
  function object(ev) {
    var s = (ev.op ? ev.op + " " : "") + kindOf(ev) + name(ev.key);
    if (isNoop(ev)) return s + "@" + ev.rv + " no-op";
    if (ev.kind === "call" && ev.op === "OnUpdate" && ev.prevRV) return s + "@" + ev.prevRV + "→" + ev.rv;
    s += ev.rv ? "@" + ev.rv : "";
    return isTombstone(ev) ? s + " tombstone" : s;
  }

  // kindOf is, for a write of a resource other than pods (the world's
  // line names it after the verb: "create configmaps ns0/cfg@3"), its
  // kubectl short name and a slash, so the etcd lane tells a
  // deployment's write from a pod's; "" for a pod's.
  function kindOf(ev) {
    if (ev.kind !== "write") return "";
    var m = /^\S+ ([a-z][a-z0-9.-]*) \S/.exec(ev.text);
    if (!m || m[1] === "pods" || m[1].indexOf("/") >= 0) return "";
    return ({configmaps: "cm", deployments: "deploy", secrets: "secret"}[m[1]] || m[1]) + "/";
  }

  function watchEvent(ev) {
    var w = ev.watch ? ev.watch + " " : "";
    if (ev.key) return w + ev.op + " " + name(ev.key) + (ev.rv ? "@" + ev.rv : "");
    var code = errorCode(ev);
    if (code) return w + "ERROR " + status(code);
    var b = /^BOOKMARK rv (\d+)(?: \((.*)\))?/.exec(ev.text.replace(/^w\d+ /, ""));
    if (b) {
      var why = !b[2] ? "" : /initial events end/.test(b[2]) ? " · initial end" : /watch cache's own/.test(b[2]) ? " · cache's own" :
        /progress/.test(b[2]) ? " · progress" : "";
      return w + "BOOKMARK @" + b[1] + why;
    }
    return cut(ev.text.split(" (")[0], 30); // w2 closed by the server
  }

  function watchEnd(ev) {
    var w = ev.watch || "watch";
    if (/TCP connection was cut/.test(ev.text)) return w + " ended: connection cut";
    if (/server closes/.test(ev.text)) return w + " closed by the server";
    return w + " ended";
  }

  function request(ev) {
    if (ev.op !== "answer") return ev.text.trim().split(/\s+/).slice(0, 3).join(" ");
    var who = ev.watch || "LIST", t = ev.text.replace(/^\s*->\s*/, ""), code = errorCode(ev);
    if (code) return who + " → " + status(code);
    var items = /^(\d+ items?), rv (\d+)( \(more pages\))?( \(from (.*)cache\))?/.exec(t);
    if (items) return who + " → " + items[1] + " @" + items[2] + (items[3] ? " +pages" : "") + (items[4] ? " (cache)" : "");
    if (t.length > 24) t = t.split(/: | \(/)[0];
    return who + " → " + cut(t, 30);
  }

  function wire(ev) {
    var f = ev.text.split(" ");
    if (f.length < 3) return "";
    return (ev.watch || "LIST") + " " + f[0] + " " + (f[2] === "failed:" ? "failed" : f.slice(2).join(" "));
  }

  function reflector(ev) {
    var t = ev.text, m, code = errorCode(ev);
    if ((m = /^(relist|re-watch) after backoff (\S+)/.exec(t))) return m[1] + " (backoff " + m[2] + ")";
    if ((m = /^replace: (\d+) objects?, store at rv (\d+)/.exec(t))) return "replace: " + m[1] + " @" + m[2];
    var what = [[/^watch ended/, "watch ended"], [/^watch error handler/, "watch error"],
      [/^watch-list failed; falling back to LIST/, "watch-list failed → LIST"], [/^watch-list request failed/, "watch-list refused"]];
    for (var i = 0; i < what.length; i++) {
      if (!what[i][0].test(t)) continue;
      if (code) return what[i][1] + ": " + status(code);
      return t === what[i][1] ? t : cut(what[i][1] + ": " + t.replace(/^[^:]*: /, "").replace(/^reflector: /, ""), 30);
    }
    return cut(t.split(" (")[0], 30);
  }

  // reconcileOutcome is a reconcile line's result in a few words, for its
  // chip: ok, error, a 409 conflict, what it wrote, a requeue, or skipped
  // by the staleness guard.
  function reconcileOutcome(t) {
    if (/not reconciled/.test(t)) return "skipped: stale cache";
    var i = t.lastIndexOf("-> ");
    if (i < 0) return "?";
    var r = t.slice(i + 3), parts = [];
    var w = /wrote rv (\d+)/.exec(r);
    if (w) parts.push("wrote @" + w[1]);
    if (/has been modified|Conflict/.test(r)) parts.push("409 conflict");
    else if (/^error/.test(r)) parts.push("error");
    else if (/\bok\b/.test(r)) parts.push("ok");
    var q = /requeue-after (\d+\w+)/.exec(r);
    if (q && !/overrides/.test(r)) parts.push("requeue " + q[1]);
    return parts.join(" · ");
  }

  // legend is what each mark means, with a sample chip: [classes, sample, meaning].
  var legend = [
    ["", "a@2→4", "update"],
    ["noop", "b@3 no-op", "same object again (resync, relist)"],
    ["tomb", "c@5 tombstone", "missed delete (DeletedFinalStateUnknown)"],
    ["err e410", "410 Gone", "history compacted: relist"],
    ["err", "500", "other error"],
  ];

  return {label: label, marks: marks, legend: legend, noop: isNoop};
})();
