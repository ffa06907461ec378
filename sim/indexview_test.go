package sim

import (
	"maps"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cachelab/cachelab/sim/trace"
)

// The view reads what describing every object would give, whatever a
// store does between reads (issue 28): objects added, replaced by new
// ones, deleted, the store emptied or refilled, and, in a checked read,
// one changed in place. takeChanges names every key whose description
// changed since it was last called, and the maps the view handed out
// never change. Describing everything is the reference.
func TestIndexViewReadsWhatDescribingWould(t *testing.T) {
	rnd := rand.New(rand.NewPCG(28, 1))
	v := newIndexView()
	held := map[string]*unstructured.Unstructured{}
	obj := func(name string, rv int) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetNamespace("ns")
		u.SetName(name)
		u.SetResourceVersion(strconv.Itoa(rv))
		return u
	}
	var noted map[string]string // what the last takeChanges saw
	var handed []map[string]string
	var handedThen []map[string]string
	for i := range 400 {
		checked := true
		switch op := rnd.IntN(10); {
		case op < 3:
			name := "o" + strconv.Itoa(rnd.IntN(60))
			held[name] = obj(name, i)
		case op < 5:
			for name := range held {
				delete(held, name)
				break
			}
		case op == 5 && len(held) > 0: // changed in place: only a checked read must see it
			for _, u := range held {
				u.SetResourceVersion(strconv.Itoa(1000 + i))
				break
			}
		case op == 6 && rnd.IntN(8) == 0: // emptied, or refilled with new objects
			for name := range held {
				if rnd.IntN(2) == 0 {
					delete(held, name)
				} else {
					held[name] = obj(name, i)
				}
			}
		default:
			checked = rnd.IntN(2) == 0 // nothing changed: an unchecked read is as good
		}
		objs := make([]any, 0, len(held))
		for _, u := range held {
			objs = append(objs, u)
		}
		got := v.read(objs, checked)
		want := map[string]string{}
		for _, o := range objs {
			k, d := trace.KeyAndDescribe(o)
			want[k] = d
		}
		if checked {
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("read %d: the view differs from describing everything (-want +got):\n%s", i, d)
			}
		}
		if rnd.IntN(3) == 0 && checked {
			keys, all := v.takeChanges()
			if !all && noted != nil {
				for k := range want {
					if noted[k] != want[k] && !keys[k] {
						t.Fatalf("read %d: %s changed (%q -> %q) but takeChanges did not name it", i, k, noted[k], want[k])
					}
				}
				for k := range noted {
					if _, ok := want[k]; !ok && !keys[k] {
						t.Fatalf("read %d: %s left but takeChanges did not name it", i, k)
					}
				}
			}
			noted = maps.Clone(got)
		}
		handed, handedThen = append(handed, got), append(handedThen, maps.Clone(got))
	}
	for i := range handed {
		if d := cmp.Diff(handedThen[i], handed[i]); d != "" {
			t.Fatalf("a map handed out at read %d changed later (-then +now):\n%s", i, d)
		}
	}
}
