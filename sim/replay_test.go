package sim

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cachelab/cachelab/cluster"
	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/recording"
	"github.com/cachelab/cachelab/sim/trace"
)

// recordLive records an informer of ns on the test cluster while write
// makes changes there; write waits, through wait, for the recorded
// informer's handler to have each change before it makes the next. It
// returns the session, read back as a file.
func recordLive(t *testing.T, tc *testCluster, res listwatch.Resource, ns string, write func(wait func(call, key string))) *recording.Session {
	t.Helper()
	cfg, err := tc.c.Wire()
	if err != nil {
		t.Fatal(err)
	}
	lines := make(chan recording.Line, 1<<16)
	var out bytes.Buffer
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- recording.Record(ctx, cfg, recording.Options{Resource: res, Namespace: ns, Server: tc.c.Host(),
			Written: func(l recording.Line) { lines <- l }}, &out)
	}()
	wait := func(call, key string) {
		t.Helper()
		for l := range lines {
			if l.Kind == recording.KindHandler && l.Call == call && l.Key == key {
				return
			}
		}
	}
	write(wait)
	cancel(errors.New("the test has recorded what it wrote"))
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	raw := out.String()
	s, err := recording.Read(&out, "session.jsonl")
	if err != nil {
		t.Fatalf("%v\n%s", err, raw)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the session recorded:\n%s", raw)
		}
	})
	return s
}

// namespace is a namespace of the test's own on tc's cluster, deleted
// when the test ends, and its objects of res.
func (tc *testCluster) namespace(t *testing.T, res listwatch.Resource) (*cluster.Namespace, *cluster.Objects) {
	t.Helper()
	nsp, err := tc.c.Begin(context.Background(), "rec-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nsp.End(context.Background()) })
	objs, err := nsp.Of(res)
	if err != nil {
		t.Fatal(err)
	}
	return nsp, objs
}

// mustWrite fails the test at a write that failed.
func mustWrite(t *testing.T) func(*unstructured.Unstructured, error) {
	return func(_ *unstructured.Unstructured, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// replay runs a session's replay, and fails the test unless client-go
// agreed at every step and cachelab's replayed handler made the calls
// the recorded informer made.
func replay(t *testing.T, s *recording.Session) {
	t.Helper()
	rp, err := NewReplay(s)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := rp.Scenario()
	if err != nil {
		t.Fatal(err)
	}
	ses, err := Open(context.Background(), sc, Options{Replay: rp, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer ses.Close()
	for _, st := range sc.Steps {
		sr, err := ses.Step(st)
		if err != nil {
			t.Fatal(err)
		}
		if sr.Divergence != nil {
			t.Fatalf("%v\nthe replay's scenario:\n%s", sr.Divergence, rp.ScenarioText())
		}
	}
	if d := ses.Finish(); d != nil {
		t.Fatal(d)
	}
	if d := ses.ReplayDifference(); d != "" {
		t.Errorf("%s\nthe replay's scenario:\n%s", d, rp.ScenarioText())
	}
}

// Record, then replay: a session recorded from a live informer on the
// cluster replays to both implementations, which agree at every step, and
// cachelab's replayed informer makes the handler calls, in order, that
// the live one made. Objects are kept as names, labels and
// resourceVersions only.
func TestRecordThenReplay(t *testing.T) {
	tc := startTestCluster(t)
	ctx := context.Background()
	nsp, ns := tc.namespace(t, listwatch.Pods)
	pod := func(name string, labels map[string]string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind("Pod")
		u.SetNamespace(nsp.Name())
		u.SetName(name)
		u.SetLabels(labels)
		return u
	}
	must := mustWrite(t)
	must(ns.Create(ctx, pod("a", map[string]string{"app": "web"}))) // in the first LIST
	key := func(name string) string { return nsp.Name() + "/" + name }
	s := recordLive(t, tc, listwatch.Pods, nsp.Name(), func(wait func(call, key string)) {
		wait("OnAdd(initial)", key("a"))
		must(ns.Create(ctx, pod("b", nil)))
		wait("OnAdd", key("b"))
		a, err := ns.Get(ctx, nsp.Name(), "a")
		must(a, err)
		a.SetLabels(map[string]string{"app": "web", "tier": "front"})
		must(ns.Update(ctx, a))
		wait("OnUpdate", key("a"))
		must(ns.Delete(ctx, nsp.Name(), "b", listwatch.Preconditions{}))
		wait("OnDelete", key("b"))
		must(ns.Create(ctx, pod("c", nil)))
		wait("OnAdd", key("c"))
	})
	for i, l := range s.Lines {
		if l.Kind == recording.KindEvent && l.Type != "ERROR" {
			if _, ok := l.Object["spec"]; ok {
				t.Errorf("%s: an event's object keeps its spec: %v", s.Pos(i), l.Object)
			}
			md := l.Object["metadata"].(map[string]any)
			for k := range md {
				switch k {
				case "name", "namespace", "resourceVersion", "labels", "annotations":
				default:
					t.Errorf("%s: an event's metadata keeps %s", s.Pos(i), k)
				}
			}
		}
	}
	calls := 0
	for _, l := range s.Lines {
		if l.Kind == recording.KindHandler {
			calls++
		}
	}
	if calls != 5 {
		t.Errorf("the live informer made %d handler calls, want 5", calls)
	}
	replay(t, s)
}

// A session of another resource replays as one of pods does: the
// replay's informer is of that resource (its start says
// informer=<resource>), both implementations agree at every step, and
// cachelab's replayed handler makes the recorded informer's calls. The
// test writes the objects itself, through the API: a deployment too,
// which a run on a cluster does not write, but a recording only reads.
func TestRecordThenReplayOtherResources(t *testing.T) {
	tc := startTestCluster(t)
	for _, tt := range []struct {
		res    listwatch.Resource
		object func(name, v string) map[string]any
	}{
		{listwatch.ConfigMaps, func(_, v string) map[string]any { return map[string]any{"data": map[string]any{"v": v}} }},
		{listwatch.Deployments, func(name, v string) map[string]any {
			return map[string]any{"spec": map[string]any{
				"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
				"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": name, "v": v}},
					"spec": map[string]any{"containers": []any{map[string]any{"name": "app", "image": "nginx:1.27"}}}},
			}}
		}},
	} {
		t.Run(tt.res.Resource, func(t *testing.T) {
			ctx := context.Background()
			nsp, _ := tc.namespace(t, listwatch.Pods)
			api := tc.dyn.Resource(tt.res.GroupVersionResource()).Namespace(nsp.Name())
			obj := func(name, v string) *unstructured.Unstructured {
				u := &unstructured.Unstructured{Object: tt.object(name, v)}
				u.SetGroupVersionKind(tt.res.GroupVersionKind())
				u.SetName(name)
				return u
			}
			must := mustWrite(t)
			must(api.Create(ctx, obj("a", "1"), metav1.CreateOptions{}))
			key := func(name string) string { return nsp.Name() + "/" + name }
			s := recordLive(t, tc, tt.res, nsp.Name(), func(wait func(call, key string)) {
				wait("OnAdd(initial)", key("a"))
				must(api.Create(ctx, obj("b", "1"), metav1.CreateOptions{}))
				wait("OnAdd", key("b"))
				a := obj("a", "2")
				cur, err := api.Get(ctx, "a", metav1.GetOptions{})
				must(cur, err)
				a.SetResourceVersion(cur.GetResourceVersion())
				must(api.Update(ctx, a, metav1.UpdateOptions{}))
				wait("OnUpdate", key("a"))
				if err := api.Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
				wait("OnDelete", key("b"))
			})
			if s.Header.Resource != tt.res.Resource {
				t.Fatalf("the session line records %q", s.Header.Resource)
			}
			rp, err := NewReplay(s)
			if err != nil {
				t.Fatal(err)
			}
			if text := rp.ScenarioText(); !strings.Contains(text, "\nstart informer="+tt.res.Resource+" namespace="+nsp.Name()+"\n") {
				t.Errorf("the replay's informer is not of %s:\n%s", tt.res.Resource, text)
			}
			replay(t, s)
		})
	}
}

// A session with a gap (a 410, a LIST that got 429, a new list with a
// delete and a create unseen) replays to both implementations, on both
// stacks, and they agree at every step; cachelab's cache ends as the
// recording's server does.
func TestReplayAGap(t *testing.T) {
	// Beside the other parallel tests once the serial ones have run
	// (parallel_test.go): its runs take their places among -parallel's.
	t.Parallel()
	f, err := os.Open("../recording/testdata/gap.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := recording.Read(f, "gap.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	rp, err := NewReplay(s)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := rp.Scenario()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rp.ScenarioText(), "\nfail-next list=429\n") {
		t.Errorf("the LIST that failed is not in the scenario:\n%s", rp.ScenarioText())
	}
	for _, stack := range []informer.Stack{informer.Default, informer.Classic} {
		t.Run(string(stack), func(t *testing.T) {
			parallelIn(t, stack)
			ses, err := Open(context.Background(), sc, Options{Replay: rp, Stack: stack, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer ses.Close()
			for _, st := range sc.Steps {
				sr, err := ses.Step(st)
				if err != nil {
					t.Fatal(err)
				}
				if sr.Divergence != nil {
					t.Fatalf("%v\n%s", sr.Divergence, rp.ScenarioText())
				}
			}
			_, seg := rp.History.SegmentAt(time.Hour)
			objs, _ := seg.StateAt(time.Hour)
			want := map[string]string{}
			for k, o := range objs {
				want[k] = trace.Describe(&unstructured.Unstructured{Object: o})
			}
			if got := ses.r.sides[0].snapshot().Indexer; !cmp.Equal(got, want) {
				t.Errorf("cachelab's indexer at the end, against the recording's server (-server +cachelab):\n%s", cmp.Diff(want, got))
			}
		})
	}
}

// A LIST that failed with a status fail-next cannot take (one with no
// name, as a proxy's 499) is left out of the replay's scenario, as a
// failure with no status is, and the session still replays; a named
// one is a fail-next.
func TestReplayLeavesOutUnnamedStatuses(t *testing.T) {
	const session = `{"kind":"session","at":"0s","version":1,"resource":"pods","server":"https://example:6443"}
{"kind":"list","at":"10ms","limit":500,"listRV":"100","items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","namespace":"ns0","resourceVersion":"90"}}]}
{"kind":"watch","at":"11ms","watch":1,"resourceVersion":"100"}
{"kind":"event","at":"1s","watch":1,"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","code":410,"reason":"Expired","message":"too old resource version: 100 (150)"}}
{"kind":"watch-end","at":"1s","watch":1}
{"kind":"list","at":"1.5s","limit":500,"error":"499 unknown: client closed request"}
{"kind":"list","at":"2s","limit":500,"error":"503 ServiceUnavailable: try later"}
{"kind":"list","at":"3s","limit":500,"listRV":"200","items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","namespace":"ns0","resourceVersion":"90"}}]}
{"kind":"end","at":"4s","error":"--for 4s passed"}
`
	s, err := recording.Read(strings.NewReader(session), "s.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	rp, err := NewReplay(s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rp.Scenario(); err != nil {
		t.Fatalf("%v\n%s", err, rp.ScenarioText())
	}
	text := rp.ScenarioText()
	if strings.Contains(text, "499") || !strings.Contains(text, "\nfail-next list=503\n") {
		t.Errorf("the replay's scenario, want fail-next list=503 and no 499:\n%s", text)
	}
}

// readGap reads recording/testdata/gap.jsonl as a replay.
func readGap(t *testing.T) *Replay {
	t.Helper()
	f, err := os.Open("../recording/testdata/gap.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := recording.Read(f, "gap.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	rp, err := NewReplay(s)
	if err != nil {
		t.Fatal(err)
	}
	return rp
}

// A replay's messages name what the user has: each step's position is a
// line of the session (the session line for the handler and the start,
// then the line that made each moment, or the LIST that failed), never a
// line of the scenario made from it; a start the replay cannot make names
// the session line.
func TestReplayStepsAreSessionLines(t *testing.T) {
	rp := readGap(t)
	sc, err := rp.Scenario()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, st := range sc.Steps {
		got = append(got, st.Cmd+" "+sc.Pos(st))
	}
	want := []string{"add-handler gap.jsonl:1", "start gap.jsonl:1", "advance gap.jsonl:4", "advance gap.jsonl:5", "advance gap.jsonl:6",
		"fail-next gap.jsonl:8", "advance gap.jsonl:8", "advance gap.jsonl:9", "advance gap.jsonl:11", "advance gap.jsonl:12"}
	if !cmp.Equal(got, want) {
		t.Errorf("the steps' positions (-want +got):\n%s", cmp.Diff(want, got))
	}
	rp.Session.Header.Fields = "status.phase=Running"
	if _, err := rp.Scenario(); err == nil || !strings.HasPrefix(err.Error(), "gap.jsonl:1: the recorded informer's start cannot be replayed: fields=(status.phase=Running): field label not supported") {
		t.Errorf("a field selector a start cannot take: %v", err)
	}
}

// A replay has no etcd: what the invariants hold the informers' caches
// to is the recording, and their notes say so. Here the recording's
// first snapshot loses ns0/b once the informers have listed it, so the
// next step finds b in their indexers and not in the recording.
func TestReplayInvariantsNameTheRecording(t *testing.T) {
	rp := readGap(t)
	sc, err := rp.Scenario()
	if err != nil {
		t.Fatal(err)
	}
	ses, err := Open(context.Background(), sc, Options{Replay: rp, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer ses.Close()
	var notes []string
	for i, st := range sc.Steps[:3] {
		sr, err := ses.Step(st)
		if err != nil {
			t.Fatal(err)
		}
		if i == 1 { // start: both have listed a and b
			delete(rp.History.Segments[0].Objects, "ns0/b")
		}
		for _, e := range sr.Sides[trace.Cachelab] {
			if e.Kind == trace.KindNote {
				notes = append(notes, e.Detail)
			}
		}
	}
	want := []string{"invariant: the indexer differs from the recording at rv 101: ns0/b@95 only in the indexer"}
	if !cmp.Equal(notes, want) {
		t.Errorf("the notes (-want +got):\n%s", cmp.Diff(want, notes))
	}
}
