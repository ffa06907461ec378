package exercise

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/notebooks/internal/lab"
)

// PopsFunc is a solution to check: yours (Pops) or the reference.
type PopsFunc func([]Op) [][]Delta

// Checks are the behaviours the lab checks. Each runs a story of
// operations through client-go's real DeltaFIFO and through your model,
// and compares every pop.
func Checks(pops PopsFunc) []lab.Check {
	story := func(ops ...Op) func() error { return func() error { return same(pops, ops) } }
	return []lab.Check{
		{ID: "D1", Behaviour: "one key's changes come out together, in order", Run: story(
			add("a", "1"), update("a", "2"), update("a", "3"))},
		{ID: "D1", Behaviour: "keys come out in the order first queued", Run: story(
			add("a", "1"), add("b", "2"), update("a", "3"), add("c", "4"))},
		{ID: "D1", Behaviour: "a key popped and changed again goes to the back", Run: story(
			add("a", "1"), add("b", "2"), pop(), update("a", "3"), add("c", "4"))},
		{ID: "D2", Behaviour: "two deletes in a row keep the older", Run: story(
			add("a", "1"), del("a", "2"), del("a", "3"))},
		{ID: "D3", Behaviour: "deleting a key nobody queued does nothing", Run: story(
			del("ghost", "1"), add("a", "2"), pop(), del("a", "3"))},
		{ID: "D1-D3", Behaviour: "200 random stories of adds, updates, deletes, pops", Run: func() error {
			rnd := rand.New(rand.NewPCG(1, 2))
			for range 200 {
				if err := same(pops, randomStory(rnd)); err != nil {
					return err
				}
			}
			return nil
		}},
	}
}

func add(k, rv string) Op    { return Op{Kind: "add", Key: k, RV: rv} }
func update(k, rv string) Op { return Op{Kind: "update", Key: k, RV: rv} }
func del(k, rv string) Op    { return Op{Kind: "delete", Key: k, RV: rv} }
func pop() Op                { return Op{Kind: "pop"} }

func randomStory(rnd *rand.Rand) []Op {
	var ops []Op
	kinds := []string{"add", "update", "delete", "delete", "pop"}
	for i := range 3 + rnd.IntN(10) {
		k := kinds[rnd.IntN(len(kinds))]
		if k == "pop" {
			ops = append(ops, pop())
			continue
		}
		ops = append(ops, Op{Kind: k, Key: string(rune('a' + rnd.IntN(3))), RV: fmt.Sprint(i + 1)})
	}
	return ops
}

// same runs ops through client-go's DeltaFIFO and through pops.
func same(pops PopsFunc, ops []Op) error {
	want := clientGoPops(ops)
	got := pops(ops)
	if cmp.Equal(got, want) || (len(got) == 0 && len(want) == 0) {
		return nil
	}
	for i := range max(len(got), len(want)) {
		var g, w []Delta
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if !cmp.Equal(g, w) {
			return fmt.Errorf("story: %s\npop %d: client-go's DeltaFIFO gives %s; yours gives %s", tell(ops), i+1, show(w), show(g))
		}
	}
	return errors.New("unreachable")
}

// clientGoPops runs ops through client-go's DeltaFIFO. The queue is
// closed first: writes still work after Close, and Pop then returns
// ErrFIFOClosed on an empty queue instead of waiting (D7), so a "pop" of
// an empty queue pops nothing, and popping until that error empties it.
func clientGoPops(ops []Op) [][]Delta {
	q := cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{})
	q.Close()
	var out [][]Delta
	popOne := func() bool {
		_, err := q.Pop(func(obj any, _ bool) error {
			var item []Delta
			for _, d := range obj.(cache.Deltas) {
				m := d.Object.(*metav1.PartialObjectMetadata)
				item = append(item, Delta{Type: string(d.Type), Key: m.Name, RV: m.ResourceVersion})
			}
			out = append(out, item)
			return nil
		})
		return !errors.Is(err, cache.ErrFIFOClosed)
	}
	for _, op := range ops {
		obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: op.Key, ResourceVersion: op.RV}}
		switch op.Kind {
		case "add":
			_ = q.Add(obj)
		case "update":
			_ = q.Update(obj)
		case "delete":
			_ = q.Delete(obj)
		case "pop":
			popOne()
		}
	}
	for popOne() {
	}
	return out
}

func tell(ops []Op) string {
	parts := make([]string, len(ops))
	for i, op := range ops {
		if op.Kind == "pop" {
			parts[i] = "pop"
		} else {
			parts[i] = op.Kind + " " + op.Key + "@" + op.RV
		}
	}
	return strings.Join(parts, ", ")
}

func show(item []Delta) string {
	if item == nil {
		return "nothing"
	}
	parts := make([]string, len(item))
	for i, d := range item {
		parts[i] = d.Type + " " + d.Key + "@" + d.RV
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
