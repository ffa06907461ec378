package htmlview

import (
	"bytes"
	"encoding/json"
	"flag"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cachelab/cachelab/internal/golden"
	"github.com/cachelab/cachelab/sim/trace"
)

var update = flag.Bool("update", false, "rewrite testdata/*.html with what Write writes")

// The page of a real run, byte for byte. Refresh with:
// go test ./sim/trace/htmlview -run TestGolden -update
func TestGolden(t *testing.T) {
	for _, name := range []string{"relist-after-compaction"} {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Write(&b, loadRun(t, name)); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "testdata/"+name+".html", b.String(), *update, "Write("+name+")")
		})
	}
}

// A page loads nothing: no URL it could fetch, no font, no script src.
func TestSelfContained(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, loadRun(t, "relist-after-compaction")); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []*regexp.Regexp{regexp.MustCompile(`(?i)\b(src|href)="(https?:)?//`), regexp.MustCompile(`(?i)@import|url\(\s*['"]?[^#'"\s]|@font-face`),
		regexp.MustCompile(`(?i)<(script|link|img|iframe)[^>]+(src|href)=`), regexp.MustCompile(`(?i)fetch\(|XMLHttpRequest`)} {
		if m := bad.FindString(b.String()); m != "" {
			t.Errorf("the page loads something from outside: %q", m)
		}
	}
}

// Every event comes back whole from its shape: the words view.js puts
// together are the trace's (the same replacement as fill).
func TestWordingRoundTrip(t *testing.T) {
	for _, e := range []trace.Event{
		{Kind: trace.KindCall, Op: "OnUpdate", Key: "ns0/a", RV: "4", PrevRV: "2", Detail: "ns0/a@2 -> ns0/a@4"},
		{Kind: trace.KindCall, Op: "OnUpdate", Key: "ns0/b", RV: "3", PrevRV: "3", Detail: "ns0/b@3 -> ns0/b@3 (same object: a resync or relist)"},
		{Kind: trace.KindEvent, Watch: "w3", Key: "ns0/c", RV: "5", Detail: "ADDED ns0/c@5"},
		{Kind: trace.KindWorld, Key: "ns0/a", Detail: "put-raw ns0/a {not json}"},                    // braces: kept whole
		{Kind: trace.KindPop, Op: "Deleted", Key: "ns0/a", Detail: "DeletedFinalStateUnknown ns0/a"}, // no rv
		{Kind: trace.KindNote, Detail: "invariant: indexer not checked"},
	} {
		w := wording(e)
		if got := fill(w, e); got != e.Text() {
			t.Errorf("fill(wording(%+v)) = %q, want %q", e, got, e.Text())
		}
		if e.Key != "" && !strings.ContainsAny(e.Detail, "{}") && strings.Contains(w, e.Key) {
			t.Errorf("wording(%+v) = %q: the key is still in it", e, w)
		}
	}
}

// Bands open at one command and close at another, or mark one step; a
// band still open at the end runs to the last step.
func TestFaults(t *testing.T) {
	steps := func(cmds ...string) []trace.StepResult {
		var out []trace.StepResult
		for i, c := range cmds {
			out = append(out, trace.StepResult{Index: i + 1, Cmd: c})
		}
		return out
	}
	for _, tc := range []struct {
		name string
		cmds []string
		want []fault
	}{
		{"disconnect", []string{"start", "disconnect", "update ns0/a", "reconnect"},
			[]fault{{Kind: "disconnected", From: 2, To: 4, Cmd: "disconnect"}}},
		{"open at the end", []string{"hold-cache", "compact"},
			[]fault{{Kind: "cache held", From: 1, To: 2, Cmd: "hold-cache"}, {Kind: "compacted", From: 2, To: 2, Cmd: "compact"}}},
		{"a member", []string{"etcd-stop-member m2", "etcd-stop-member m1", "etcd-start-member m2"},
			[]fault{{Kind: "etcd m2 down", From: 1, To: 3, Cmd: "etcd-stop-member m2"}, {Kind: "etcd m1 down", From: 2, To: 3, Cmd: "etcd-stop-member m1"}}},
		{"none", []string{"start", "reconnect"}, []fault{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := faults(steps(tc.cmds...)); !cmp.Equal(got, tc.want) {
				t.Errorf("faults(%q) = %+v, want %+v", tc.cmds, got, tc.want)
			}
		})
	}
}

// Lanes: the world's, then each layer's in the order a change travels,
// handlers by name, cachelab's lane right above client-go's (issue 47).
func TestLanes(t *testing.T) {
	ev := func(layer string) trace.Event { return trace.Event{Layer: layer} }
	of := func(informer, layer string) trace.Event { return trace.Event{Layer: layer, Informer: informer} }
	sr := trace.StepResult{World: []trace.Event{ev("sim"), ev("etcd")}, Sides: map[string][]trace.Event{
		trace.Cachelab: {ev("handler/h2"), ev("handler/h1"), of("b/pods", "watch"), ev("watch"), of("a/pods", "watch"), ev("pop")},
		trace.ClientGo: {ev("handler/h1"), ev("watch")},
	}}
	got := lanes([]trace.StepResult{sr}, nil)
	// Each informer's lanes of a layer come together, start's first.
	want := []lane{{"world", "etcd", ""}, {"world", "sim", ""}, {"cachelab", "watch", ""}, {"client-go", "watch", ""},
		{"cachelab", "watch", "a/pods"}, {"cachelab", "watch", "b/pods"}, {"cachelab", "pop", ""},
		{"cachelab", "handler/h1", ""}, {"client-go", "handler/h1", ""}, {"cachelab", "handler/h2", ""}}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(lane{})); d != "" {
		t.Errorf("lanes (-want +got):\n%s", d)
	}
}

// At 10,000 objects the page stays a few MB: every event is there, in
// about 20 bytes.
func TestBulkSize(t *testing.T) {
	page, events := bulkPage()
	per := len(page) / events
	t.Logf("10,000 objects: %d events, a page of %d bytes (%d a event)", events, len(page), per)
	if per > 30 {
		t.Errorf("%d bytes a event, want at most 30", per)
	}
}

// A story's sentence is one template for every object: its
// resourceVersions are taken out as whole numbers only, never from a
// watch's name (w3) or a longer number.
func TestTellingTemplates(t *testing.T) {
	for _, tc := range []struct {
		e    trace.Event
		want string
	}{
		{trace.Event{Layer: trace.LayerWatch, Kind: trace.KindEvent, Watch: "w3", Op: "ADDED", Key: "ns0/a", RV: "3", Detail: "ADDED ns0/a@3"},
			"watch w3 delivered ADDED at rv {rv}"},
		{trace.Event{Layer: trace.LayerWatch, Kind: trace.KindEvent, Watch: "w33", Op: "ADDED", Key: "ns0/a", RV: "3", Detail: "ADDED ns0/a@3"},
			"watch w33 delivered ADDED at rv {rv}"},
		{trace.Event{Layer: trace.LayerEtcd, Kind: trace.KindWrite, Op: "update", Key: "ns0/a", RV: "13", PrevRV: "3", Detail: "update ns0/a@3 -> ns0/a@13"},
			"updated in etcd, rv {prv} → {rv}"},
		{trace.Event{Layer: "handler/h1", Kind: trace.KindCall, Handler: "h1", Op: "OnUpdate", Key: "ns0/a", RV: "4", PrevRV: "2", Detail: "ns0/a@2 -> ns0/a@4"},
			"handler h1: OnUpdate {p} -> {r}"},
	} {
		side := trace.Cachelab
		if tc.e.Layer == trace.LayerEtcd {
			side = trace.World
		}
		told := trace.Tell([]trace.Event{tc.e}, side, false)[0]
		if got := telling(tc.e, told); got != tc.want {
			t.Errorf("%q: template %q, want %q", told.Sentence, got, tc.want)
		}
		if got := fill(telling(tc.e, told), tc.e); got != told.Sentence {
			t.Errorf("the template of %q fills back to %q", told.Sentence, got)
		}
	}
}

// A run whose steps did nothing (a lone add-handler) still has every
// table of the page as a list: the page reads them all (found by
// cachelab explore, whose shortest files can be that short).
func TestEmptyRunHasLists(t *testing.T) {
	v := build(Run{Header: trace.Header{FeatureGates: map[string]bool{}, IDs: []string{}},
		Steps: []trace.StepResult{{Index: 1, Cmd: "add-handler h1", Sides: map[string][]trace.Event{}}}})
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "null") {
		t.Errorf("the page's data has a null, which view.js cannot read: %s", b)
	}
}
