package listwatch_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/cachelab/cachelab/listwatch"
)

// populate writes a small history both sides will read: five pods in two
// namespaces with labels, an update and a delete. It returns the
// revision after each write.
func (s *sides) populate(t testing.TB) []int64 {
	t.Helper()
	ctx := context.Background()
	var revs []int64
	step := func(obj *unstructured.Unstructured, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		revs = append(revs, s.rev(t))
	}
	step(s.w.Create(ctx, pod("ns1/a", "app", "web", "tier", "front")))
	step(s.w.Create(ctx, pod("ns1/b", "app", "db")))
	step(s.w.Create(ctx, pod("ns2/a", "app", "web")))
	step(s.w.Create(ctx, pod("ns2/c")))
	step(s.w.Update(ctx, pod("ns1/b", "app", "web")))
	step(s.w.Create(ctx, pod("ns1/d", "app", "db")))
	step(s.w.Delete(ctx, "ns2", "c", listwatch.Preconditions{}))
	return revs
}

func int64p(n int64) *int64 { return &n }

// LIST: resourceVersion and match rules (E3), their 422s and 400s (E11),
// limits and continue tokens (E4), selectors (E5): every answer equal.
func TestDiffE3E4E5E11List(t *testing.T) {
	s := newSides(t)
	revs := s.populate(t)
	now := revs[len(revs)-1]
	old := revs[2]
	exact, notOlder := metav1.ResourceVersionMatchExact, metav1.ResourceVersionMatchNotOlderThan
	cases := []struct {
		name string
		ns   string
		opts metav1.ListOptions
	}{
		{"latest", "", metav1.ListOptions{}},
		{"any", "", metav1.ListOptions{ResourceVersion: "0"}},
		{"legacy N is not-older-than", "", metav1.ListOptions{ResourceVersion: itoa(old)}},
		{"legacy N with a limit is exact", "", metav1.ListOptions{ResourceVersion: itoa(old), Limit: 2}},
		{"exact", "", metav1.ListOptions{ResourceVersion: itoa(old), ResourceVersionMatch: exact}},
		{"exact now", "ns1", metav1.ListOptions{ResourceVersion: itoa(now), ResourceVersionMatch: exact}},
		{"not older than", "", metav1.ListOptions{ResourceVersion: itoa(old), ResourceVersionMatch: notOlder}},
		{"not older than 0", "", metav1.ListOptions{ResourceVersion: "0", ResourceVersionMatch: notOlder}},
		{"too large, legacy", "", metav1.ListOptions{ResourceVersion: itoa(now + 5)}},
		{"too large, not older than", "", metav1.ListOptions{ResourceVersion: itoa(now + 5), ResourceVersionMatch: notOlder}},
		{"too large, exact", "", metav1.ListOptions{ResourceVersion: itoa(now + 5), ResourceVersionMatch: exact}},
		{"too large, legacy with limit", "", metav1.ListOptions{ResourceVersion: itoa(now + 5), Limit: 1}},
		{"exact without rv", "", metav1.ListOptions{ResourceVersionMatch: exact}},
		{"exact at 0", "", metav1.ListOptions{ResourceVersion: "0", ResourceVersionMatch: exact}},
		{"match without rv", "", metav1.ListOptions{ResourceVersionMatch: notOlder}},
		{"unknown match", "", metav1.ListOptions{ResourceVersion: "1", ResourceVersionMatch: "Newest"}},
		{"bad rv", "", metav1.ListOptions{ResourceVersion: "abc"}},
		{"negative rv", "", metav1.ListOptions{ResourceVersion: "-1"}},
		{"bad rv, exact", "", metav1.ListOptions{ResourceVersion: "x", ResourceVersionMatch: exact}},
		{"limit 1", "", metav1.ListOptions{Limit: 1}},
		{"limit 3 ns1", "ns1", metav1.ListOptions{Limit: 3}},
		{"limit beyond", "", metav1.ListOptions{Limit: 50}},
		{"negative limit", "", metav1.ListOptions{Limit: -1}},
		{"limit at rv 0", "", metav1.ListOptions{Limit: 1, ResourceVersion: "0"}},
		{"limit exact", "", metav1.ListOptions{Limit: 2, ResourceVersion: itoa(old), ResourceVersionMatch: exact}},
		{"limit not older", "", metav1.ListOptions{Limit: 2, ResourceVersion: itoa(old), ResourceVersionMatch: notOlder}},
		{"label =", "", metav1.ListOptions{LabelSelector: "app=web"}},
		{"label set", "", metav1.ListOptions{LabelSelector: "app in (web,db),!tier"}},
		{"label exists", "ns1", metav1.ListOptions{LabelSelector: "tier"}},
		{"label and limit", "", metav1.ListOptions{LabelSelector: "app=web", Limit: 1}},
		{"field name", "", metav1.ListOptions{FieldSelector: "metadata.name=a"}},
		{"field namespace", "", metav1.ListOptions{FieldSelector: "metadata.namespace=ns2"}},
		{"field name in namespace", "ns1", metav1.ListOptions{FieldSelector: "metadata.name=b"}},
		{"field name and namespace", "", metav1.ListOptions{FieldSelector: "metadata.namespace=ns1,metadata.name=d"}},
		{"field not equal", "", metav1.ListOptions{FieldSelector: "metadata.name!=a", Limit: 2}},
		{"field and label", "", metav1.ListOptions{FieldSelector: "metadata.namespace=ns1", LabelSelector: "app=web"}},
		{"field in other namespace", "ns1", metav1.ListOptions{FieldSelector: "metadata.namespace=ns2"}},
		{"bad label selector", "", metav1.ListOptions{LabelSelector: "app=="}},
		{"bad label value", "", metav1.ListOptions{LabelSelector: "app=a b"}},
		{"bad field selector", "", metav1.ListOptions{FieldSelector: "metadata.name"}},
		{"unsupported field", "", metav1.ListOptions{FieldSelector: "spec.nodeName=n1"}},
		{"bad continue", "", metav1.ListOptions{Continue: "not-a-token"}},
		{"continue with rv", "", metav1.ListOptions{Continue: "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6Mywic3RhcnQiOiJucyJ9", ResourceVersion: "3"}},
		{"continue with match", "", metav1.ListOptions{Continue: "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6Mywic3RhcnQiOiJucyJ9", ResourceVersionMatch: exact}},
		{"empty namespace", "ns9", metav1.ListOptions{}},
		// Regressions: each of these differed before listwatch read its
		// options in kube-apiserver's order and scope.
		{"unsupported field and a bad match: 422 first", "", metav1.ListOptions{FieldSelector: "spec.nodeName=n1", ResourceVersionMatch: exact}},
		{"bad token and an rv: the token first", "", metav1.ListOptions{Continue: "not-a-token", ResourceVersion: "3"}},
		{"namespace narrowed by the field selector: tokens relative to it", "", metav1.ListOptions{FieldSelector: "metadata.namespace=ns1", Limit: 1}},
		{"one key: legacy rv with a limit is not exact", "", metav1.ListOptions{FieldSelector: "metadata.namespace=ns1,metadata.name=b", Limit: 1, ResourceVersion: itoa(old)}},
		{"one key in the path's namespace", "ns1", metav1.ListOptions{FieldSelector: "metadata.name=b", Limit: 1, ResourceVersion: itoa(old)}},
		{"one key, too large", "ns1", metav1.ListOptions{FieldSelector: "metadata.name=b", ResourceVersion: itoa(now + 2)}},
		{"one key that does not exist", "ns2", metav1.ListOptions{FieldSelector: "metadata.name=zz", ResourceVersion: itoa(old), ResourceVersionMatch: exact}},
		{"watch-only options", "", metav1.ListOptions{AllowWatchBookmarks: true, TimeoutSeconds: int64p(3)}},
		{"send initial events on a list", "", metav1.ListOptions{SendInitialEvents: boolp(true), ResourceVersionMatch: notOlder}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ours, theirs := s.in(c.ns)
			listBoth(t, ours, theirs, c.opts)
		})
	}
}

func boolp(b bool) *bool { return &b }

// Paging to the end: every page and every continue token (raw and
// decoded) equal, each side continuing from its own token. (E4)
func TestDiffE4Pages(t *testing.T) {
	s := newSides(t)
	s.populate(t)
	for _, c := range []struct {
		ns, label string
		limit     int64
		field     string
	}{{"", "", 1, ""}, {"", "", 2, ""}, {"ns1", "", 1, ""}, {"", "app=web", 1, ""}, {"", "app=db", 1, ""},
		// The first page is read under ns1's prefix, the next ones (a
		// continuation is never narrowed) under the resource's, with a
		// token relative to ns1's: kube-apiserver's own inconsistency,
		// which listwatch reproduces.
		{"", "", 1, "metadata.namespace=ns1"}} {
		ours, theirs := s.in(c.ns)
		opts := metav1.ListOptions{Limit: c.limit, LabelSelector: c.label, FieldSelector: c.field}
		a := listBoth(t, ours, theirs, opts)
		for i := 0; a.List != nil && a.List.GetContinue() != ""; i++ {
			if i > 10 {
				t.Fatal("more pages than objects")
			}
			opts.Continue = a.List.GetContinue()
			a = listBoth(t, ours, theirs, opts)
		}
	}
}

// Compaction: a LIST at a compacted revision and a continue token whose
// revision was compacted get the same 410s, the latter with the same
// inconsistent-continue token; that token's list is the same. (E3, E4)
func TestDiffE3E4Compacted(t *testing.T) {
	ctx := context.Background()
	s := newSides(t)
	revs := s.populate(t)
	ours, theirs := s.in("")
	first := listBoth(t, ours, theirs, metav1.ListOptions{Limit: 2})
	if _, err := s.w.Create(ctx, pod("ns3/e")); err != nil {
		t.Fatal(err)
	}
	if err := s.etcd.Compact(ctx, s.rev(t)); err != nil {
		t.Fatal(err)
	}
	listBoth(t, ours, theirs, metav1.ListOptions{ResourceVersion: itoa(revs[1]), ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	listBoth(t, ours, theirs, metav1.ListOptions{ResourceVersion: itoa(revs[1]), Limit: 1})
	listBoth(t, ours, theirs, metav1.ListOptions{ResourceVersion: itoa(revs[1])})
	expired := listBoth(t, ours, theirs, metav1.ListOptions{Limit: 2, Continue: first.List.GetContinue()})
	if expired.Status == nil || expired.Status.Continue == "" {
		t.Fatalf("continue at a compacted revision: %+v, want 410 with a token", expired)
	}
	listBoth(t, ours, theirs, metav1.ListOptions{Limit: 2, Continue: expired.Status.Continue})
}

// churn writes changes that enter and leave the selectors the tests use.
func (s *sides) churn(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	check := func(_ *unstructured.Unstructured, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	check(s.w.Create(ctx, pod("ns1/e", "app", "web")))
	check(s.w.Update(ctx, pod("ns1/a", "app", "db")))
	check(s.w.Update(ctx, pod("ns1/d", "app", "web", "tier", "back")))
	check(s.w.Delete(ctx, "ns1", "b", listwatch.Preconditions{}))
	check(s.w.Create(ctx, pod("ns2/f")))
	check(s.w.Delete(ctx, "ns1", "e", listwatch.Preconditions{}))
}

// WATCH: where a watch starts (E6), selectors entering and leaving (E5),
// watch-list with its initial-events-end bookmark (E9), the errors of
// bad options, future and compacted resourceVersions (E3, E7, E11):
// every event equal, opened before churn and read after it.
func TestDiffE5E6E7E9Watch(t *testing.T) {
	t.Parallel() // it waits on etcd, mostly (main_test.go)
	s := newSides(t)
	revs := s.populate(t)
	ctx := context.Background()
	// Revisions before revs[2] are gone: a watch from revs[0] would
	// start at revs[1], one from revs[1] at revs[2], the first kept.
	if err := s.etcd.Compact(ctx, revs[2]); err != nil {
		t.Fatal(err)
	}
	now := s.rev(t)
	notOlder := metav1.ResourceVersionMatchNotOlderThan
	yes, no := boolp(true), boolp(false)
	cases := []struct {
		name string
		ns   string
		opts metav1.ListOptions
	}{
		{"legacy from now", "", metav1.ListOptions{}},
		{"legacy from now, bookmarks", "", metav1.ListOptions{AllowWatchBookmarks: true}},
		{"legacy from 0", "ns1", metav1.ListOptions{ResourceVersion: "0"}},
		{"legacy from 0, bookmarks", "", metav1.ListOptions{ResourceVersion: "0", AllowWatchBookmarks: true}},
		{"from a past revision", "", metav1.ListOptions{ResourceVersion: itoa(revs[3])}},
		{"from now", "", metav1.ListOptions{ResourceVersion: itoa(now), AllowWatchBookmarks: true}},
		{"from the first kept revision", "", metav1.ListOptions{ResourceVersion: itoa(revs[1])}},
		{"from a compacted revision", "", metav1.ListOptions{ResourceVersion: itoa(revs[0])}},
		{"label selector", "", metav1.ListOptions{ResourceVersion: itoa(revs[2]), LabelSelector: "app=web"}},
		{"label selector from now", "ns1", metav1.ListOptions{LabelSelector: "app=web"}},
		{"field selector name", "", metav1.ListOptions{ResourceVersion: itoa(now), FieldSelector: "metadata.name=a"}},
		{"field selector namespace and name", "", metav1.ListOptions{ResourceVersion: itoa(now), FieldSelector: "metadata.namespace=ns1,metadata.name=d"}},
		{"field selector namespace", "", metav1.ListOptions{FieldSelector: "metadata.namespace=ns2", AllowWatchBookmarks: true}},
		{"watch-list", "", metav1.ListOptions{SendInitialEvents: yes, ResourceVersionMatch: notOlder, AllowWatchBookmarks: true}},
		{"watch-list without bookmarks", "ns1", metav1.ListOptions{SendInitialEvents: yes, ResourceVersionMatch: notOlder}},
		{"watch-list from a past revision", "", metav1.ListOptions{SendInitialEvents: yes, ResourceVersionMatch: notOlder, ResourceVersion: itoa(revs[3]), AllowWatchBookmarks: true}},
		{"watch-list from a compacted revision", "", metav1.ListOptions{SendInitialEvents: yes, ResourceVersionMatch: notOlder, ResourceVersion: itoa(revs[0]), AllowWatchBookmarks: true}},
		{"watch-list with a selector", "", metav1.ListOptions{SendInitialEvents: yes, ResourceVersionMatch: notOlder, LabelSelector: "app in (web,db)", AllowWatchBookmarks: true}},
		{"watch-list too large", "", metav1.ListOptions{SendInitialEvents: yes, ResourceVersionMatch: notOlder, ResourceVersion: itoa(now + 3), AllowWatchBookmarks: true}},
		{"no initial events from now", "", metav1.ListOptions{SendInitialEvents: no, ResourceVersionMatch: notOlder, AllowWatchBookmarks: true}},
		{"no initial events from a past revision", "", metav1.ListOptions{SendInitialEvents: no, ResourceVersionMatch: notOlder, ResourceVersion: itoa(revs[4])}},
		{"initial events without a match", "", metav1.ListOptions{SendInitialEvents: yes}},
		{"exact match on a watch", "", metav1.ListOptions{ResourceVersion: itoa(now), ResourceVersionMatch: metav1.ResourceVersionMatchExact}},
		{"not older than on a legacy watch", "", metav1.ListOptions{ResourceVersion: itoa(now), ResourceVersionMatch: notOlder}},
		{"bad resource version", "", metav1.ListOptions{ResourceVersion: "abc"}},
		{"bad label selector", "", metav1.ListOptions{LabelSelector: "app in ("}},
		{"unsupported field", "", metav1.ListOptions{FieldSelector: "status.phase=Running"}},
		{"continue on a watch", "", metav1.ListOptions{Continue: "abc"}},
		{"limit on a watch", "", metav1.ListOptions{Limit: 2, AllowWatchBookmarks: true}},
	}
	for _, c := range cases {
		if p := s.watchBoth(t, c.ns, c.opts); p != nil {
			p.name = c.name
		}
	}
	s.settle(t)
	s.churn(t)
	s.settle(t)
}

// A watch ends at its TimeoutSeconds on the server's clock: the stream
// closes, with no Error event, on both sides. (E10)
func TestDiffE10Timeout(t *testing.T) {
	s := newSides(t)
	s.populate(t)
	p := s.watchBoth(t, "", metav1.ListOptions{ResourceVersion: itoa(s.rev(t)), TimeoutSeconds: int64p(30), AllowWatchBookmarks: true})
	s.settle(t)
	s.clock.Step(30 * time.Second)
	for _, side := range p.sides {
		side.readTo(t, math.MaxInt64, math.MaxInt) // to the end
	}
	p.compare(t)
	if !p.sides[0].ended {
		t.Error("the watch did not end at its timeout")
	}
}

// Bookmarks: a progress request is answered on the asking side's
// watches that allowed bookmarks with a BOOKMARK at etcd's revision,
// the watched kind's empty object carrying only that resourceVersion.
// (E8; the apiserver's storage also sends it to watches that did not
// allow bookmarks: doc.go says why listwatch does not.)
func TestDiffE8Bookmarks(t *testing.T) {
	s := newSides(t)
	s.populate(t)
	p := s.watchBoth(t, "ns1", metav1.ListOptions{ResourceVersion: itoa(s.rev(t)), AllowWatchBookmarks: true, LabelSelector: "app=web"})
	// None for this one: a bookmark it got would come before the next
	// write's event, which settle compares.
	s.watchBoth(t, "ns1", metav1.ListOptions{ResourceVersion: itoa(s.rev(t))})
	s.churn(t)
	s.settle(t)
	var got [2]watch.Event
	rev := s.rev(t)
	for i, side := range p.sides {
		got[i] = side.nextProgress(t, rev)
	}
	if d := cmp.Diff(got[1], got[0]); d != "" {
		t.Errorf("progress bookmark differs (-apiserver +listwatch):\n%s", d)
	}
	if rv := rvOf(got[0].Object.(*unstructured.Unstructured)); got[0].Type != watch.Bookmark || rv != s.rev(t) {
		t.Errorf("progress: %s, want BOOKMARK at %d", describe(got[0]), s.rev(t))
	}
	if _, err := s.w.Create(context.Background(), pod("ns1/z")); err != nil {
		t.Fatal(err)
	}
	s.settle(t)
}

// With the WatchList feature off, a WATCH that asks for initial events is
// refused with the same 422, and a legacy watch is not made a watch-list:
// no initial-events-end bookmark, even with bookmarks allowed. (E6, E11)
func TestDiffE11WatchListOff(t *testing.T) {
	s := newSides(t)
	s.populate(t)
	s.ours.SetWatchListFeature(false)
	s.theirs.SetWatchListFeature(false)
	notOlder := metav1.ResourceVersionMatchNotOlderThan
	for _, opts := range []metav1.ListOptions{
		{SendInitialEvents: boolp(true), ResourceVersionMatch: notOlder, AllowWatchBookmarks: true},
		{SendInitialEvents: boolp(false), ResourceVersionMatch: notOlder},
		{AllowWatchBookmarks: true},
		{ResourceVersion: "0", AllowWatchBookmarks: true, LabelSelector: "app=web"},
		{AllowWatchBookmarks: true, LabelSelector: "app=none"},
	} {
		s.watchBoth(t, "", opts)
	}
	listBoth(t, s.ours, s.theirs, metav1.ListOptions{SendInitialEvents: boolp(true), ResourceVersionMatch: notOlder})
	s.settle(t)
	s.churn(t)
	s.settle(t)
}

// A watch with initial events watches etcd from its snapshot before the
// client has taken them: a compaction while the client is slow to read
// them does not break it. The fuzzer found listwatch opening its etcd
// watch only after the last initial event was taken, so such a watch
// ended with 410 where kube-apiserver's went on. (E6, E7, E9)
func TestDiffE7SlowInitialEventsOutliveCompaction(t *testing.T) {
	ctx := context.Background()
	s := newSides(t)
	s.populate(t)
	slow := s.watchBoth(t, "", metav1.ListOptions{AllowWatchBookmarks: true})
	slow.sides[0].readTo(t, math.MaxInt64, 1) // one initial event each, no more
	if _, err := s.w.Create(ctx, pod("ns3/x")); err != nil {
		t.Fatal(err)
	}
	// etcd answers the probe's progress request only once it has created
	// every watch the client asked for before it, the slow one's included.
	now := s.rev(t)
	probe := s.watchBoth(t, "", metav1.ListOptions{ResourceVersion: itoa(now - 1), AllowWatchBookmarks: true})
	for _, side := range probe.sides {
		side.readTo(t, now, -1)
	}
	if err := s.etcd.Compact(ctx, now); err != nil {
		t.Fatal(err)
	}
	s.settle(t)
	if n := len(slow.sides[0].events); n != 6 {
		t.Errorf("slow watch: %s; want 4 initial events, the end bookmark and the create", describeAll(slow.sides[0].events))
	}
}
