package mermaid_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/trace/mermaid"
)

// runOn plays a built-in scenario as `cachelab run NAME --server SERVER`
// does.
func runOn(t *testing.T, name, server string) mermaid.Run {
	t.Helper()
	sc, err := sim.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Run(context.Background(), sc, sim.Options{Seed: 1, Server: server})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return mermaid.Run{Header: res.Header, Steps: res.Steps}
}

// wireRE is an arrow between kube-apiserver and a reflector, either way:
// a request, its answer, a wire try, a watch event, a watch's end.
var wireRE = regexp.MustCompile(`^\s*(?:api(?:->>|-->>|-x|--x)refl\w*|refl\w*(?:->>|-->>|-x|--x)api): (.*)$`)

// deleteAt is a delete as etcd's line says it: the object's key and
// the revision of the delete.
var deleteAt = regexp.MustCompile(`(\S+)@\d+ \(at rv (\d+)\)`)

// Every line between kube-apiserver and a reflector names the watch it
// is about (w1, w2...) or says it is a LIST's: two watches' lines come in
// one step (a 410 on the watch that was waiting, after the request of
// the next one), and a line without its watch reads as the wrong one's
// (issue 47, case 10: "w2 ERROR 410" drawn after "w3 WATCH-LIST" as if
// w3's). Over the wire each HTTP try names its watch too.
func TestWireLinesNameTheirWatch(t *testing.T) {
	named := regexp.MustCompile(`^(?:⚠ )?(?:w\d+|LIST)\b`)
	for _, tc := range []struct{ scenario, server string }{
		{"relist-after-compaction", ""},
		{"watch-errors", ""}, // 429 and 500 answers, LISTs
		{"relist-after-compaction", "apiserver"},
		{"watch-cache-lag", ""},
	} {
		t.Run(tc.scenario+"/"+tc.server, func(t *testing.T) {
			got := mermaid.Render(runOn(t, tc.scenario, tc.server), mermaid.Options{})
			if err := mermaid.Validate(got); err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, l := range strings.Split(got, "\n") {
				m := wireRE.FindStringSubmatch(l)
				if m == nil {
					continue
				}
				n++
				if !named.MatchString(m[1]) {
					t.Errorf("a line between kube-apiserver and the reflector names no watch: %q", strings.TrimSpace(l))
				}
			}
			if n == 0 {
				t.Fatalf("no line between kube-apiserver and the reflector:\n%s", got)
			}
			if tc.scenario == "relist-after-compaction" && tc.server == "" && !strings.Contains(got, "w2 ERROR 410") {
				t.Errorf("the 410 does not say it is w2's:\n%s", got)
			}
		})
	}
}

// In the watch-cache world, what a watch hands the reflector comes from
// etcd through kube-apiserver's watch cache: each write drawn as a note
// over etcd and nothing else left the events to start from nowhere
// (issue 47, case 10). Each event a watch hands on after the initial
// ones has an arrow from etcd to kube-apiserver before it, naming the
// same object at the same revision; a held watch cache hears etcd only
// when it is released.
func TestWatchCacheEventsComeFromEtcd(t *testing.T) {
	for _, scenario := range []string{"factory-shared-informer", "watch-cache-lag"} {
		t.Run(scenario, func(t *testing.T) {
			got := mermaid.Render(runOn(t, scenario, ""), mermaid.Options{})
			if err := mermaid.Validate(got); err != nil {
				t.Fatal(err)
			}
			event := regexp.MustCompile(`^\s*api->>refl\w*: (?:w\d+ )?(\S+@\d+) (ADDED|MODIFIED|DELETED)$`)
			fromEtcd := map[string]bool{}
			events := 0
			for _, l := range strings.Split(got, "\n") {
				if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "etcd->>api: "); ok {
					for _, f := range strings.Fields(rest) {
						fromEtcd[strings.Trim(f, ",()")] = true
					}
					for _, m := range deleteAt.FindAllStringSubmatch(rest, -1) { // delete ns0/a@2 (at rv 4)
						fromEtcd[m[1]+"@"+m[2]] = true
					}
				}
				if m := event.FindStringSubmatch(l); m != nil {
					events++
					if !fromEtcd[m[1]] {
						t.Errorf("%s reaches the reflector with no arrow from etcd to kube-apiserver before it: %q", m[1], strings.TrimSpace(l))
					}
				}
			}
			if events == 0 {
				t.Fatalf("no watch event drawn:\n%s", got)
			}
			if scenario == "watch-cache-lag" && !regexp.MustCompile(`(?m)^\s*Note over etcd: delete ns0/a@2 \(at rv 4\) .*held`).MatchString(got) {
				t.Errorf("the delete written while the watch cache is held is not a note over etcd alone:\n%s", got)
			}
		})
	}
}

// A show command's output is drawn, as a note over the layer it shows
// (issue 47, case 10: "show store" drew nothing). So are the queue
// layer's counts.
func TestShowIsDrawn(t *testing.T) {
	for _, tc := range []struct {
		scenario string
		want     []string
	}{
		{"add-update-delete", []string{"Note over idx: show store<br/>1 object#59; last synced rv 5<br/>ns0/a@4 labels=app=api"}},
		{"watch-cache-lag", []string{"Note over refl: show requests<br/>LIST rv=0 limit=500"}},
		{"coalescing-deltafifo", []string{"Note over queue: 2 items waiting"}},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			got := mermaid.Render(runOn(t, tc.scenario, ""), mermaid.Options{})
			if err := mermaid.Validate(got); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("the diagram does not draw %q:\n%s", w, got)
				}
			}
		})
	}
}
