package listwatch_test

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/cachelab/cachelab/listwatch"
)

// Which keys a request reads (E16). kube-apiserver's generic registry
// narrows a LIST and a WATCH alike before storage sees them
// (registry/generic/registry/store.go ListPredicate, WatchPredicate): a
// field selector that requires metadata.namespace reads (and watches)
// that namespace's prefix, one that also requires metadata.name reads
// one key; the predicate filters the rest. Without a value it cannot
// decode, narrowing changes nothing a client sees but the prefix of a
// continue token; with one, it decides whether the request meets the
// value and fails (E12). So every shape is tried with an undecodable
// value inside and outside the range it narrows to, for LIST, WATCH
// (the value arrives as an event) and watch-list (it is among the
// initial events). ListerWatcher.Reads, which tells a simulator whether
// a request's range holds a key, is held to which of kube-apiserver's
// watches met the value.

// narrowCase is one request shape: a namespace (the request's path) and
// selectors.
type narrowCase struct {
	name   string
	ns     string
	fields string
	labels string
}

// podShapes are the request shapes for a namespaced resource: every
// selector the registry narrows by, combined with labels and with the
// request's own namespace, and the ones it does not narrow by.
var podShapes = []narrowCase{
	{name: "namespace field, all namespaces", fields: "metadata.namespace=ns0"},
	{name: "namespace field and a label", fields: "metadata.namespace=ns0", labels: "app=web"},
	{name: "namespace and name fields", fields: "metadata.namespace=ns0,metadata.name=a"},
	{name: "name and namespace fields with a label", fields: "metadata.name=a,metadata.namespace=ns0", labels: "app"},
	{name: "namespace and name fields naming the raw key", fields: "metadata.namespace=ns0,metadata.name=raw"},
	{name: "name field, all namespaces", fields: "metadata.name=a"},
	{name: "the path's namespace", ns: "ns0"},
	{name: "the path's namespace and a label", ns: "ns0", labels: "app=web"},
	{name: "name field in the path's namespace", ns: "ns0", fields: "metadata.name=a"},
	{name: "name field and a label in the path's namespace", ns: "ns0", fields: "metadata.name=a", labels: "app=web"},
	{name: "the path's namespace and another's field", ns: "ns0", fields: "metadata.namespace=ns1"},
	{name: "the path's namespace and another's field with a name", ns: "ns0", fields: "metadata.namespace=ns1,metadata.name=a"},
	{name: "namespace not equal", fields: "metadata.namespace!=ns1"},
	{name: "two namespaces", fields: "metadata.namespace=ns0,metadata.namespace=ns1"},
	{name: "a namespace that is not a valid name", fields: "metadata.namespace=NS0"},
	{name: "a namespace with a slash", fields: "metadata.namespace=ns0/a"},
	{name: "an empty namespace", fields: "metadata.namespace="},
	{name: "a name with a slash", ns: "ns0", fields: "metadata.name=a/b"},
	{name: "a name with a percent sign", fields: "metadata.namespace=ns0,metadata.name=a%b"},
	{name: "the name ..", ns: "ns0", fields: "metadata.name=.."},
	{name: "the name .", fields: "metadata.namespace=ns0,metadata.name=."},
	{name: "an empty name", ns: "ns0", fields: "metadata.name="},
}

// rawKey is where an undecodable value is put: namespace and name.
type rawKey struct{ ns, name string }

// TestDiffE16NarrowedRequestsMeetRawValues: for each place an
// undecodable value can be (another namespace, a namespace whose name
// extends ns0's, ns0 itself), every shape's LIST, WATCH and watch-list
// get the same answers and events on both sides.
func TestDiffE16NarrowedRequestsMeetRawValues(t *testing.T) {
	t.Parallel() // it waits on etcd, mostly (main_test.go)
	s := newSides(t)
	ctx := context.Background()
	for _, p := range []*unstructured.Unstructured{
		pod("ns0/a", "app", "web"), pod("ns0/b", "app", "db"), pod("ns1/a", "app", "web"), pod("ns00/a", "app", "web"),
	} {
		if _, err := s.w.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	for _, at := range []rawKey{{"ns1", "raw"}, {"ns00", "raw"}, {"ns0", "raw"}, {"ns0", "a"}} {
		t.Run(at.ns+"/"+at.name, func(t *testing.T) {
			s.narrowRound(t, podShapes, at, func(round string) {
				if _, err := s.w.Create(ctx, pod("ns0/"+round, "app", "web")); err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}

// TestDiffE16ClusterScopedNarrowing: a cluster-scoped resource is
// narrowed by a name only (its key has no namespace), with or without
// a namespace field, which the predicate then applies.
func TestDiffE16ClusterScopedNarrowing(t *testing.T) {
	t.Parallel() // it waits on etcd, mostly (main_test.go)
	e := startEtcd(t)
	nodes := listwatch.Resource{Version: "v1", Resource: "nodes", Kind: "Node"}
	s := serveBoth(t, e, nodes, connectTo(context.Background(), t, e), connectTo(context.Background(), t, e))
	ctx := context.Background()
	for _, n := range []string{"a", "b"} {
		if _, err := s.w.Create(ctx, node(n, "app", "web")); err != nil {
			t.Fatal(err)
		}
	}
	shapes := []narrowCase{
		{name: "everything"},
		{name: "name field", fields: "metadata.name=a"},
		{name: "name field and a label", fields: "metadata.name=a", labels: "app=web"},
		{name: "name field naming the raw key", fields: "metadata.name=raw"},
		{name: "namespace field", fields: "metadata.namespace=ns0"},
		{name: "empty namespace field", fields: "metadata.namespace="},
		{name: "namespace and name fields", fields: "metadata.namespace=ns0,metadata.name=a"},
		{name: "empty namespace and name fields", fields: "metadata.namespace=,metadata.name=a"},
		{name: "a name with a slash", fields: "metadata.name=a/b"},
		{name: "an empty name", fields: "metadata.name="},
	}
	for _, at := range []rawKey{{"", "raw"}, {"", "a"}} {
		t.Run(at.name, func(t *testing.T) {
			s.narrowRound(t, shapes, at, func(round string) {
				if _, err := s.w.Create(ctx, node(round, "app", "web")); err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}

// narrowRound plays one placement of the undecodable value at: WATCHes
// opened before it is put, LISTs and watch-lists while it is there, a
// write after it (which the watches that survived deliver), then the
// value removed and another write; every answer and event compared.
// write makes a good object named for the phase.
func (s *sides) narrowRound(t *testing.T, shapes []narrowCase, at rawKey, write func(round string)) {
	ctx := context.Background()
	defer s.closeAll()
	watchOpts := func(c narrowCase) metav1.ListOptions {
		return metav1.ListOptions{FieldSelector: c.fields, LabelSelector: c.labels, AllowWatchBookmarks: true, ResourceVersion: itoa(s.rev(t))}
	}
	before := map[*pair]narrowCase{} // the WATCHes the value arrives in
	for _, c := range shapes {
		p := s.watchBoth(t, c.ns, watchOpts(c))
		s.named(c.name+": watch", p)
		if p != nil {
			before[p] = c
		}
	}
	var old []byte
	if prev, err := s.etcd.Client().Get(ctx, s.keyOf(at)); err == nil && len(prev.Kvs) == 1 {
		old = prev.Kvs[0].Value // a good object the value replaces, put back at the end
	}
	if _, err := s.w.PutRaw(ctx, at.ns, at.name, []byte("garbage")); err != nil {
		t.Fatal(err)
	}
	for _, c := range shapes {
		ours, theirs := s.in(c.ns)
		listBoth(t, ours, theirs, metav1.ListOptions{FieldSelector: c.fields, LabelSelector: c.labels})
		s.named(c.name+": watch-list", s.watchBoth(t, c.ns, metav1.ListOptions{FieldSelector: c.fields, LabelSelector: c.labels,
			AllowWatchBookmarks: true, SendInitialEvents: boolp(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}))
		s.named(c.name+": legacy watch from 0", s.watchBoth(t, c.ns, metav1.ListOptions{FieldSelector: c.fields, LabelSelector: c.labels, ResourceVersion: "0"}))
	}
	write("c" + at.ns + at.name)
	s.settle(t)
	s.checkReads(t, before, at)
	if old != nil {
		if _, err := s.etcd.Client().Put(ctx, s.keyOf(at), string(old)); err != nil {
			t.Fatal(err)
		}
	} else if _, err := s.w.DeleteRaw(ctx, at.ns, at.name); err != nil {
		t.Fatal(err)
	}
	write("d" + at.ns + at.name)
	s.settle(t)
}

// checkReads holds ListerWatcher.Reads to what kube-apiserver's storage
// did: a WATCH whose range holds the undecodable value ended with an
// Error when the value arrived, and only such a WATCH did.
func (s *sides) checkReads(t *testing.T, watches map[*pair]narrowCase, at rawKey) {
	t.Helper()
	for p, c := range watches {
		lw := s.ours.WithNamespace(c.ns)
		reads, err := lw.Reads(metav1.ListOptions{FieldSelector: c.fields, LabelSelector: c.labels}, at.ns, at.name)
		if err != nil {
			t.Fatal(err)
		}
		theirs := p.sides[1]
		if failed := theirs.ended && len(theirs.events) > 0 && theirs.events[len(theirs.events)-1].Type == watch.Error; failed != reads {
			t.Errorf("%s: Reads(%s/%s) = %v, but kube-apiserver's watch met the value: %v", p.name, at.ns, at.name, reads, failed)
		}
	}
}

// named names a pair for messages (nil when the WATCH itself failed).
func (s *sides) named(name string, p *pair) {
	if p != nil {
		p.name = name
	}
}

// closeAll stops every open watch: the next round opens its own.
func (s *sides) closeAll() {
	for _, p := range s.open {
		p.stop()
	}
	s.open = nil
}

// keyOf is the etcd key of at in the sides' resource.
func (s *sides) keyOf(at rawKey) string {
	parts := []string{"/registry", s.res.Resource, at.ns, at.name}
	if !s.res.Namespaced {
		parts = []string{"/registry", s.res.Resource, at.name}
	}
	return strings.Join(parts, "/")
}

// node is a cluster-scoped object of kind Node.
func node(name string, labels ...string) *unstructured.Unstructured {
	u := pod(name, labels...)
	u.SetKind("Node")
	u.SetNamespace("")
	return u
}
