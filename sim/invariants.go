package sim

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"unsafe"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cachelab/cachelab/sim/trace"
)

// invariants checks, after a settled step: the indexer equals etcd's
// content at the informer's last synced resourceVersion; each handler's
// view, rebuilt from its calls, equals the indexer; and no handler was
// told of an add it already had, or an update or delete of something it
// did not have. What they find is printed as note lines, so that a
// cachelab-only violation shows up as a divergence from client-go.
func (r *runner) invariants(s *side, sn snapshot) []trace.Event {
	if s.inf == nil || !sn.Synced["informer"] {
		return nil
	}
	var out []trace.Event
	add := func(text string) {
		out = append(out, trace.Event{Layer: trace.LayerNote, Kind: trace.KindNote, Detail: "invariant: " + text, Informer: s.rec.Informer})
	}
	if !r.paused {
		truth := r.truth()
		if etcd, err := r.etcdAt(s.cfg, sn.LastSyncRV); err != nil {
			add("indexer not checked against " + truth + ": " + truth + " cannot serve the informer's rv " + sn.LastSyncRV + " (" + err.Error() + ")")
		} else if d := s.etcdChecked.differences(truth, etcd, "the indexer", sn.Indexer, 0); d != "" {
			add("the indexer differs from " + truth + " at rv " + sn.LastSyncRV + ": " + d)
		}
	}
	for _, h := range s.handlers {
		if h.removed {
			continue
		}
		anomalies, d := h.anomaliesAndView(sn.Indexer, !h.heldBack() && !r.paused)
		for _, a := range anomalies {
			add("handler " + h.name + ": " + a)
		}
		if d != "" {
			add("handler " + h.name + "'s view differs from the indexer: " + d)
		}
	}
	return out
}

// truth names what the invariants hold an informer's cache to: etcd,
// or in a replay, which has none, the recording.
func (r *runner) truth() string { return r.where.truth() }

// listedAt is one answer of etcdAt.
type listedAt struct {
	objects map[string]string
	err     error
}

// etcdAt lists what etcd held at rv, in the informer's namespace and
// through its selectors (cfg), once per step, scope and resourceVersion.
func (r *runner) etcdAt(cfg *startConfig, rv string) (map[string]string, error) {
	key := cfg.scope() + "\x00" + rv
	if l, ok := r.listed[key]; ok {
		return l.objects, l.err
	}
	objects, err := r.where.listAt(cfg, rv)
	if r.listed == nil {
		r.listed = map[string]listedAt{}
	}
	r.listed[key] = listedAt{objects, err}
	return objects, err
}

// scope is what an informer's LIST covers: its namespace and selectors.
func (c *startConfig) scope() string {
	return c.res.Resource + "\x00" + c.namespace + "\x00" + c.labels + "\x00" + c.fields
}

// keyedObject is what the invariants keep of an object in etcd.
type keyedObject struct{ key, desc string }

func keyed(o *unstructured.Unstructured) keyedObject {
	return keyedObject{trace.KeyOf(o), trace.Describe(o)}
}

// equalOnce remembers the last pair of maps found equal, by identity,
// and a count of changes made to the second in place (a handler's calls,
// which change its view): the maps a step's invariants compare are
// mostly the ones the step before found equal, unchanged (indexView and
// listwatch.ListCopy hand out maps they never change), and comparing a
// hundred thousand entries again finds nothing new.
type equalOnce struct {
	a, b    unsafe.Pointer // holding them keeps them from being reused for other maps
	changes int
}

// differences is differences(aName, a, bName, b) for b after changes
// changes in place.
func (m *equalOnce) differences(aName string, a map[string]string, bName string, b map[string]string, changes int) string {
	pa, pb := reflect.ValueOf(a).UnsafePointer(), reflect.ValueOf(b).UnsafePointer()
	if pa != nil && pa == m.a && pb == m.b && changes == m.changes {
		return ""
	}
	d := differences(aName, a, bName, b)
	if d == "" {
		m.a, m.b, m.changes = pa, pb, changes
	} else {
		*m = equalOnce{}
	}
	return d
}

// differences says, in one line and by key, where two views of the
// objects (key -> description) differ, or "" if they do not. A note is
// part of the trace, which must be the same on every run: go-cmp's diff
// is not (it varies its whitespace on purpose so that nobody relies on
// its form).
func differences(aName string, a map[string]string, bName string, b map[string]string) string {
	if maps.Equal(a, b) {
		return "" // the usual answer, without sorting every key
	}
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		va, inA := a[k]
		vb, inB := b[k]
		switch {
		case !inB:
			parts = append(parts, fmt.Sprintf("%s only in %s", va, aName))
		case !inA:
			parts = append(parts, fmt.Sprintf("%s only in %s", vb, bName))
		case va != vb:
			parts = append(parts, fmt.Sprintf("%s in %s, %s in %s", va, aName, vb, bName))
		}
	}
	return strings.Join(parts, "; ")
}
