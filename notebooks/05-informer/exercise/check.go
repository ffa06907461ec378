package exercise

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/notebooks/internal/lab"
)

// ProcessFunc is a solution to check: yours (Process) or the reference.
type ProcessFunc func(map[string]string, Delta, bool) []Call

// story is what a server tells an informer: the initial list, then watch
// events ("ADDED", "MODIFIED", "DELETED" of key@rv).
type story struct {
	list   []string // "key@rv"
	events []string // "TYPE key@rv"
}

// Checks are the behaviours the lab checks. Each story is told to
// client-go's own informer (cache.NewInformerWithOptions, whose handler
// calls come from client-go's processDeltas) and, delta by delta, to your
// Process; the calls and the final cache must match.
func Checks(process ProcessFunc) []lab.Check {
	check := func(s story) func() error { return func() error { return same(process, s) } }
	return []lab.Check{
		{ID: "P1", Behaviour: "the initial list: OnAdd, isInInitialList=true", Run: check(story{list: []string{"a@1", "b@2"}})},
		{ID: "P1", Behaviour: "a new object: OnAdd, isInInitialList=false", Run: check(story{list: []string{"a@1"}, events: []string{"ADDED c@3"}})},
		{ID: "P1", Behaviour: "a change: OnUpdate(old, new)", Run: check(story{list: []string{"a@1"}, events: []string{"MODIFIED a@2"}})},
		{ID: "P2", Behaviour: "a delete: OnDelete", Run: check(story{list: []string{"a@1"}, events: []string{"DELETED a@2"}})},
		{ID: "P1", Behaviour: "ADDED for a cached key: OnUpdate", Run: check(story{list: []string{"a@1"}, events: []string{"ADDED a@2"}})},
		{ID: "P1", Behaviour: "MODIFIED for an unknown key: OnAdd", Run: check(story{events: []string{"MODIFIED x@2"}})},
		{ID: "P11", Behaviour: "DELETED for a key never cached: still OnDelete", Run: check(story{events: []string{"DELETED ghost@2"}})},
		{ID: "P1-P2", Behaviour: "40 random stories", Run: func() error {
			rnd := rand.New(rand.NewPCG(5, 6))
			for range 40 {
				if err := same(process, randomStory(rnd)); err != nil {
					return err
				}
			}
			return nil
		}},
	}
}

func randomStory(rnd *rand.Rand) story {
	var s story
	rv := 1
	for _, k := range []string{"a", "b", "c"} {
		if rnd.IntN(2) == 0 {
			s.list = append(s.list, fmt.Sprintf("%s@%d", k, rv))
			rv++
		}
	}
	types := []string{"ADDED", "MODIFIED", "DELETED"}
	for range 1 + rnd.IntN(6) {
		s.events = append(s.events, fmt.Sprintf("%s %c@%d", types[rnd.IntN(3)], 'a'+rune(rnd.IntN(4)), rv))
		rv++
	}
	return s
}

// same tells s to client-go and to process, and compares.
func same(process ProcessFunc, s story) error {
	want, wantCache, err := clientGo(s)
	if err != nil {
		return err
	}
	got := []Call{}
	cache := map[string]string{}
	for _, o := range s.list {
		k, rv := split(o)
		got = append(got, process(cache, Delta{Type: "Added", Key: k, RV: rv}, true)...)
	}
	types := map[string]string{"ADDED": "Added", "MODIFIED": "Updated", "DELETED": "Deleted"}
	for _, e := range s.events {
		typ, obj, _ := strings.Cut(e, " ")
		k, rv := split(obj)
		got = append(got, process(cache, Delta{Type: types[typ], Key: k, RV: rv}, false)...)
	}
	if d := firstDifference(got, want); d != "" {
		return fmt.Errorf("%s\n%s", tell(s), d)
	}
	if !cmp.Equal(cache, wantCache) {
		return fmt.Errorf("%s\nafterwards client-go's cache holds %v; yours holds %v", tell(s), wantCache, cache)
	}
	return nil
}

func firstDifference(got, want []Call) string {
	for i := range max(len(got), len(want)) {
		switch {
		case i >= len(got):
			return fmt.Sprintf("client-go's handler then heard %s; yours heard nothing more", show(want[i]))
		case i >= len(want):
			return fmt.Sprintf("client-go's handler heard nothing more; yours then heard %s", show(got[i]))
		case got[i] != want[i]:
			return fmt.Sprintf("call %d: client-go's handler heard %s; yours heard %s", i+1, show(want[i]), show(got[i]))
		}
	}
	return ""
}

func show(c Call) string {
	switch c.Method {
	case "OnAdd":
		return fmt.Sprintf("OnAdd(%s@%s, isInInitialList=%t)", c.Key, c.New, c.InitialList)
	case "OnUpdate":
		return fmt.Sprintf("OnUpdate(%s@%s -> %s@%s)", c.Key, c.Old, c.Key, c.New)
	}
	return fmt.Sprintf("%s(%s@%s)", c.Method, c.Key, c.New)
}

func tell(s story) string {
	return fmt.Sprintf("story: initial list %v, then %v", s.list, s.events)
}

func split(o string) (key, rv string) {
	key, rv, _ = strings.Cut(o, "@")
	return key, rv
}

func object(o string) *metav1.PartialObjectMetadata {
	k, rv := split(o)
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: k, ResourceVersion: rv}}
}

// barrier is a last event: once the handler hears it, it has heard
// everything before it.
const barrier = "zz-barrier"

// clientGo tells s to client-go's informer over a ListerWatcher that
// serves s.list and then s.events, and returns the handler's calls and the
// final cache.
func clientGo(s story) ([]Call, map[string]string, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lw := &storyLW{list: s.list, watching: make(chan *watch.FakeWatcher, 1)}
	calls := make(chan Call, 100)
	handler := cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			m := obj.(*metav1.PartialObjectMetadata)
			calls <- Call{Method: "OnAdd", Key: m.Name, New: m.ResourceVersion, InitialList: initial}
		},
		UpdateFunc: func(old, obj any) {
			o, n := old.(*metav1.PartialObjectMetadata), obj.(*metav1.PartialObjectMetadata)
			calls <- Call{Method: "OnUpdate", Key: n.Name, Old: o.ResourceVersion, New: n.ResourceVersion}
		},
		DeleteFunc: func(obj any) {
			m := obj.(*metav1.PartialObjectMetadata)
			calls <- Call{Method: "OnDelete", Key: m.Name, New: m.ResourceVersion}
		},
	}
	store, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw, ObjectType: &metav1.PartialObjectMetadata{}, Handler: handler})
	done := make(chan struct{})
	go func() { defer close(done); ctrl.RunWithContext(ctx) }()
	defer func() { cancel(); <-done }()

	timeout := time.After(10 * time.Second)
	var w *watch.FakeWatcher
	select {
	case w = <-lw.watching:
	case <-timeout:
		return nil, nil, fmt.Errorf("client-go's informer did not start watching within 10s")
	}
	for _, e := range s.events {
		typ, obj, _ := strings.Cut(e, " ")
		w.Action(watch.EventType(typ), object(obj))
	}
	w.Add(object(barrier + "@999"))
	var out []Call
	for {
		select {
		case c := <-calls:
			if c.Key == barrier {
				final := map[string]string{}
				for _, o := range store.List() {
					m := o.(*metav1.PartialObjectMetadata)
					if m.Name != barrier {
						final[m.Name] = m.ResourceVersion
					}
				}
				return out, final, nil
			}
			out = append(out, c)
		case <-timeout:
			return nil, nil, fmt.Errorf("client-go's informer did not finish the story within 10s")
		}
	}
}

// storyLW serves a story's list, then one watch the checker feeds.
type storyLW struct {
	list     []string
	watching chan *watch.FakeWatcher
}

// IsWatchListSemanticsUnSupported makes client-go list, then watch.
func (*storyLW) IsWatchListSemanticsUnSupported() bool { return true }

func (l *storyLW) List(metav1.ListOptions) (runtime.Object, error) {
	out := &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
	for _, o := range l.list {
		out.Items = append(out.Items, *object(o))
	}
	return out, nil
}

func (l *storyLW) Watch(metav1.ListOptions) (watch.Interface, error) {
	w := watch.NewFakeWithChanSize(100, false)
	l.watching <- w
	return w, nil
}
