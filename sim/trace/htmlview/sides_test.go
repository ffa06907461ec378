package htmlview

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/internal/browsertest"
	"github.com/cachelab/cachelab/sim/trace"
)

// What a learner sees at 1280x800 without a click (issue 47, case 11):
// the two implementations' lanes of one layer next to each other, the
// distinctions the chapters teach marked on the chips and named in a
// legend, each chip's essential words whole, and each reconcile's
// controller.
func TestBrowserAtFirstSight(t *testing.T) {
	ctx := browsertest.Start(t)
	dir := t.TempDir()

	// Each layer's client-go lane lies right under cachelab's, so that
	// one look down a step's column compares them; the first pair is in
	// the first screen, not 600 px below it after every cachelab lane.
	t.Run("sides next to each other", func(t *testing.T) {
		for _, name := range []string{"relist-after-compaction", "factory-shared-informer", "reconcile-stale-cache"} {
			p := browsertest.Open(t, ctx, page(t, dir, "sides-"+name+".html", loadRun(t, name)))
			p.Resize(t, 1280, 800)
			p.CheckFits(t, name+" at 1280x800")
			rows := p.EvalString(t, `[...document.querySelectorAll(".row.lane")].map(r => {
				const l = JSON.parse(document.getElementById("run").textContent).lanes[+r.querySelector(".cell").dataset.lane], b = r.getBoundingClientRect();
				return [l.impl, l.layer, l.informer || "", Math.round(b.top), Math.round(b.bottom)].join("|");
			}).join("\n")`)
			type box struct{ top, bottom int }
			lanes := map[string]map[string]box{}
			var order []string
			for _, r := range strings.Split(rows, "\n") {
				f := strings.Split(r, "|")
				var b box
				fmt.Sscan(f[3], &b.top)
				fmt.Sscan(f[4], &b.bottom)
				k := f[1] + " " + f[2]
				if lanes[k] == nil {
					lanes[k] = map[string]box{}
					order = append(order, k)
				}
				lanes[k][f[0]] = b
			}
			pairs := 0
			for _, k := range order {
				cl, ok1 := lanes[k][trace.Cachelab]
				cg, ok2 := lanes[k][trace.ClientGo]
				if !ok1 || !ok2 {
					continue
				}
				pairs++
				if d := cg.top - cl.bottom; d < -1 || d > 1 {
					t.Errorf("%s: client-go's %s lane starts at y=%d, cachelab's ends at y=%d: want them adjacent", name, k, cg.top, cl.bottom)
				}
				if pairs == 1 && cg.bottom > 800 {
					t.Errorf("%s: the first layer both sides have (%s) has client-go's lane at y=%d-%d, below the first screen of 800 px", name, k, cg.top, cg.bottom)
				}
			}
			if pairs < 4 {
				t.Errorf("%s: %d layers with a lane of each side, want at least 4:\n%s", name, pairs, rows)
			}
			p.NoErrors(t)
			p.Close()
		}
	})

	// The distinctions the chapters teach are on the chips, not only in
	// the line a click shows: a no-op update against a real one, a
	// tombstone against a delete, a 410 against another error; a legend
	// names each mark.
	t.Run("marks", func(t *testing.T) {
		p := browsertest.Open(t, ctx, page(t, dir, "marks.html", marksRun()))
		p.Resize(t, 1280, 800)
		chips := p.EvalString(t, `[...document.querySelectorAll(".impl-cachelab .chip")].map(c => c.className.replace(/\s*\b(chip|on|dim)\b\s*/g, " ").trim() + "|" + c.textContent).join("\n")`)
		for _, want := range []string{
			"k-call noop|OnUpdate b@3 no-op",
			"k-call|OnUpdate a@2→4",
			"k-call tomb|OnDelete c@5 tombstone",
			"k-call|OnDelete d@6",
			"k-event err e410|w2 ERROR 410 Gone",
			"k-event err|w4 ERROR 500 Internal Error",
			"k-request err|w5 → 429 Too Many Requests",
			"k-reflector|relist (backoff 1.425s)",
		} {
			if !strings.Contains("\n"+chips+"\n", "\n"+want+"\n") {
				t.Errorf("no chip %q (classes|words); the chips:\n%s", want, chips)
			}
		}
		if cut := p.EvalString(t, `[...document.querySelectorAll(".chip")].filter(c => c.scrollWidth > c.clientWidth + 1).map(c => c.textContent).join(", ")`); cut != "" {
			t.Errorf("chips cut off at 1280 px: %s", cut)
		}
		legend := p.Text(t, "#legend")
		for _, want := range []string{"no-op", "tombstone", "410", "error"} {
			if !strings.Contains(legend, want) {
				t.Errorf("the legend %q does not name %q", legend, want)
			}
		}
		if n := p.Eval(t, `document.querySelector("#legend").getBoundingClientRect().bottom`); n > 800 {
			t.Errorf("the legend ends at y=%v, below the first screen", n)
		}
		p.NoErrors(t)
	})

	// A real run's 410 and relist read whole, each naming its watch.
	t.Run("a relist", func(t *testing.T) {
		p := browsertest.Open(t, ctx, page(t, dir, "relist.html", loadRun(t, "relist-after-compaction")))
		p.Resize(t, 1280, 800)
		chips := p.EvalString(t, `[...document.querySelectorAll(".impl-cachelab .chip")].map(c => c.textContent).join("\n")`)
		for _, want := range []string{"w2 ERROR 410 Gone", "relist (backoff 1.425s)", "w2 → waiting: disconnected", "watch ended: 410 Gone", "w3 ADDED a@4"} {
			if !strings.Contains("\n"+chips+"\n", "\n"+want+"\n") {
				t.Errorf("no chip reads %q; the chips:\n%s", want, chips)
			}
		}
		p.AtLeast(t, ".chip.e410", 2) // w2's ERROR on each side
		if cut := p.EvalString(t, `[...document.querySelectorAll(".chip.err, .k-reflector")].filter(c => c.scrollWidth > c.clientWidth + 1).map(c => c.textContent).join(", ")`); cut != "" {
			t.Errorf("chips cut off at 1280 px: %s", cut)
		}
		p.NoErrors(t)
	})

	// Two controllers share one informer: each reconcile says whose it is.
	t.Run("controllers", func(t *testing.T) {
		p := browsertest.Open(t, ctx, page(t, dir, "controllers.html", loadRun(t, "factory-shared-informer")))
		p.Resize(t, 1280, 800)
		chips := p.EvalString(t, `[...document.querySelectorAll(".chip.k-reconcile, .chip.k-workqueue")].map(c => c.textContent).join("\n")`)
		if chips == "" {
			t.Fatal("no reconcile chip")
		}
		for _, c := range strings.Split(chips, "\n") {
			if !strings.HasPrefix(c, "deploy: ") && !strings.HasPrefix(c, "audit: ") {
				t.Errorf("the chip %q does not name its controller (deploy or audit)", c)
			}
		}
		if bands := p.EvalString(t, `[...document.querySelectorAll(".band")].map(b => b.textContent).join("\n")`); strings.Contains(bands, "add ×") && !strings.Contains(bands, "deploy add ×") {
			t.Errorf("a workqueue band counts operations without their controller:\n%s", bands)
		}
		p.NoErrors(t)
	})
}

// marksRun is one step whose handler calls and errors the chapters tell
// apart: a real update and a no-op one, a delete and a tombstone, a 410
// and a 500 on a watch, a 429 answer, a relist after backoff.
func marksRun() Run {
	ev := []trace.Event{
		{Layer: "request", Kind: trace.KindRequest, Op: "answer", Watch: "w5", Detail: "  -> 429 TooManyRequests: storage is (re)initializing"},
		{Layer: "watch", Kind: trace.KindEvent, Op: "ERROR", Watch: "w2", Detail: "ERROR 410 Expired: The resourceVersion for the provided watch is too old."},
		{Layer: "watch", Kind: trace.KindEvent, Op: "ERROR", Watch: "w4", Detail: "ERROR 500 InternalError: Internal error occurred: invalid character 'g' looking for beginning of value"},
		{Layer: "reflector", Kind: trace.KindReflector, Detail: "relist after backoff 1.425s"},
		{Layer: "handler/h1", Kind: trace.KindCall, Handler: "h1", Op: "OnUpdate", Key: "ns0/a", RV: "4", PrevRV: "2", Detail: "ns0/a@2 -> ns0/a@4"},
		{Layer: "handler/h1", Kind: trace.KindCall, Handler: "h1", Op: "OnUpdate", Key: "ns0/b", RV: "3", PrevRV: "3", Order: trace.OrderSameObject,
			Detail: "ns0/b@3 -> ns0/b@3 (same object: a resync or relist)"},
		{Layer: "handler/h1", Kind: trace.KindCall, Handler: "h1", Op: "OnDelete", Key: "ns0/c", RV: "5", Order: trace.OrderTombstones,
			Detail: "DeletedFinalStateUnknown{ns0/c, last seen ns0/c@5}"},
		{Layer: "handler/h1", Kind: trace.KindCall, Handler: "h1", Op: "OnDelete", Key: "ns0/d", RV: "6", Detail: "ns0/d@6"},
	}
	return Run{Header: trace.Header{Scenario: "marks", Stack: "default", Server: "etcd", Etcd: "embedded"},
		Steps: []trace.StepResult{{Index: 1, Pos: "marks.txt:1", Cmd: "reconnect", Sides: map[string][]trace.Event{trace.Cachelab: ev, trace.ClientGo: ev}}}}
}
