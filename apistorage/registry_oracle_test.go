package apistorage_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/cachelab/cachelab/apistorage"
	"github.com/cachelab/cachelab/internal/etcdoracle"
	"github.com/cachelab/cachelab/internal/testdeadline"
	"github.com/cachelab/cachelab/listwatch"
)

// apistorage is the oracle listwatch is proven against, so it is proven
// itself: against kube-apiserver's own assembly of the same parts, the
// storage its factory builds (storagebackend/factory, with the
// AllowUnsafeMalformedObjectDeletion gate as it is by default) behind
// its generic registry (registry/generic/registry.Store, the code that
// picks the key range and predicate of a LIST and a WATCH). Both read
// one etcd; an undecodable value inside or outside each request's range
// shows which keys it read (E12, E16).

// registry is kube-apiserver's generic registry store for res over the
// storage its factory builds for the etcd at endpoints.
func registry(t testing.TB, e *listwatch.Embedded, res listwatch.Resource) *genericregistry.Store {
	t.Helper()
	cfg := etcdoracle.Config(t, e, "/registry")
	prefix := "/" + res.Resource
	s, destroy, err := factory.Create(*cfg.ForResource(res.GroupResource()), newObject(res), newList(res), prefix+"/")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(destroy)
	keyRoot := func(ctx context.Context) string { return prefix }
	key := func(ctx context.Context, name string) (string, error) {
		return genericregistry.NoNamespaceKeyFunc(ctx, prefix, name)
	}
	if res.Namespaced {
		keyRoot = func(ctx context.Context) string { return genericregistry.NamespaceKeyRootFunc(ctx, prefix) }
		key = func(ctx context.Context, name string) (string, error) {
			return genericregistry.NamespaceKeyFunc(ctx, prefix, name)
		}
	}
	attrs := storage.DefaultClusterScopedAttr // a custom resource's fields (customresource GetAttrs)
	if res.Namespaced {
		attrs = storage.DefaultNamespaceScopedAttr
	}
	return &genericregistry.Store{
		NewFunc: newObject(res), NewListFunc: newList(res), DefaultQualifiedResource: res.GroupResource(),
		KeyRootFunc: keyRoot, KeyFunc: key,
		PredicateFunc: func(l labels.Selector, f fields.Selector) storage.SelectionPredicate {
			return storage.SelectionPredicate{Label: l, Field: f, GetAttrs: attrs}
		},
		Storage: genericregistry.DryRunnableStorage{Storage: s, Codec: unstructured.UnstructuredJSONScheme},
	}
}

func newObject(res listwatch.Resource) func() runtime.Object {
	return func() runtime.Object {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(res.GroupVersionKind())
		return u
	}
}

func newList(res listwatch.Resource) func() runtime.Object {
	return func() runtime.Object {
		l := &unstructured.UnstructuredList{}
		l.SetAPIVersion(res.GroupVersionKind().GroupVersion().String())
		l.SetKind(res.Kind + "List")
		return l
	}
}

// shape is one request: its path's namespace and its selectors.
type shape struct{ ns, fields, labels string }

// podShapes are every selector shape the registry narrows by, combined
// with labels and the request's namespace, and shapes it does not
// narrow by (listwatch/diff_narrow_test.go tries the same).
var podShapes = []shape{
	{fields: "metadata.namespace=ns0"},
	{fields: "metadata.namespace=ns0", labels: "app=web"},
	{fields: "metadata.namespace=ns0,metadata.name=a"},
	{fields: "metadata.name=a,metadata.namespace=ns0", labels: "app"},
	{fields: "metadata.namespace=ns0,metadata.name=raw"},
	{fields: "metadata.name=a"},
	{ns: "ns0"},
	{ns: "ns0", labels: "app=web"},
	{ns: "ns0", fields: "metadata.name=a"},
	{ns: "ns0", fields: "metadata.name=a", labels: "app=web"},
	{ns: "ns0", fields: "metadata.namespace=ns1"},
	{ns: "ns0", fields: "metadata.namespace=ns1,metadata.name=a"},
	{fields: "metadata.namespace!=ns1"},
	{fields: "metadata.namespace=ns0,metadata.namespace=ns1"},
	{fields: "metadata.namespace=NS0"},
	{fields: "metadata.namespace=ns0/a"},
	{fields: "metadata.namespace="},
	{ns: "ns0", fields: "metadata.name=a/b"},
	{fields: "metadata.namespace=ns0,metadata.name=a%b"},
	{ns: "ns0", fields: "metadata.name=.."},
	{fields: "metadata.namespace=ns0,metadata.name=."},
	{ns: "ns0", fields: "metadata.name="},
}

// nodeShapes are the same for a cluster-scoped resource, whose key has
// no namespace: only a name narrows it.
var nodeShapes = []shape{
	{},
	{fields: "metadata.name=a"},
	{fields: "metadata.name=a", labels: "app=web"},
	{fields: "metadata.name=raw"},
	{fields: "metadata.namespace=ns0"},
	{fields: "metadata.namespace="},
	{fields: "metadata.namespace=ns0,metadata.name=a"},
	{fields: "metadata.namespace=,metadata.name=a"},
	{fields: "metadata.name=a/b"},
	{fields: "metadata.name="},
}

// TestRegistryOracleNarrowsAsKubeAPIServer: every shape's LIST and
// watch-list, and its WATCH when the undecodable value arrives, get the
// same answers and events from apistorage (no cache) as from
// kube-apiserver's registry over its factory's storage. (E12, E16)
func TestRegistryOracleNarrowsAsKubeAPIServer(t *testing.T) {
	for _, c := range []struct {
		res    listwatch.Resource
		objs   []string // ns/name; a cluster-scoped object's ns is ""
		raw    []string // where the undecodable value is put, in turn
		shapes []shape
	}{
		{listwatch.Pods, []string{"ns0/a", "ns0/b", "ns1/a", "ns00/a"}, []string{"ns1/raw", "ns00/raw", "ns0/raw", "ns0/a"}, podShapes},
		{listwatch.Resource{Version: "v1", Resource: "nodes", Kind: "Node"}, []string{"/a", "/b"}, []string{"/raw", "/a"}, nodeShapes},
	} {
		t.Run(c.res.Resource, func(t *testing.T) {
			o := newOracle(t, c.res)
			for _, key := range c.objs {
				o.put(t, key, o.object(key))
			}
			for _, at := range c.raw {
				t.Run(at, func(t *testing.T) { o.round(t, c.shapes, at) })
			}
		})
	}
}

// oracle is one etcd read by apistorage (no cache) and by kube-apiserver's
// registry over its factory's storage.
type oracle struct {
	etcd   *listwatch.Embedded
	res    listwatch.Resource
	ours   *apistorage.Server
	theirs *genericregistry.Store
	open   []*watchPair
}

func newOracle(t *testing.T, res listwatch.Resource) *oracle {
	t.Helper()
	e := etcdoracle.Start(t)
	s, err := apistorage.New(testdeadline.Context(t), e.Client(), res, apistorage.Options{Clock: clocktesting.NewFakeClock(epoch)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return &oracle{etcd: e, res: res, ours: s, theirs: registry(t, e, res)}
}

// key is the etcd key of "ns/name" (ns "" for a cluster-scoped object).
func (o *oracle) key(at string) string {
	ns, name, _ := strings.Cut(at, "/")
	if !o.res.Namespaced {
		return "/registry/" + o.res.Resource + "/" + name
	}
	return "/registry/" + o.res.Resource + "/" + ns + "/" + name
}

// object is the stored form of a good object at "ns/name": labelled
// app=web if its name is a, else app=db.
func (o *oracle) object(at string) string {
	ns, name, _ := strings.Cut(at, "/")
	u := newObject(o.res)().(*unstructured.Unstructured)
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetLabels(map[string]string{"app": map[bool]string{true: "web", false: "db"}[name == "a"]})
	b, err := u.MarshalJSON()
	if err != nil {
		panic(err)
	}
	return string(b)
}

// put stores value at "ns/name" as it is, and returns what was there.
func (o *oracle) put(t testing.TB, at, value string) string {
	t.Helper()
	resp, err := o.etcd.Client().Put(context.Background(), o.key(at), value, clientv3.WithPrevKV())
	if err != nil {
		t.Fatal(err)
	}
	if resp.PrevKv == nil {
		return ""
	}
	return string(resp.PrevKv.Value)
}

// round puts an undecodable value at at while every shape is asked: a
// WATCH opened before it arrives, a LIST and a watch-list while it is
// there; then a good write, the value taken away, another good write.
func (o *oracle) round(t *testing.T, shapes []shape, at string) {
	ctx := context.Background()
	defer o.stopAll()
	rev := o.rev(t)
	for _, s := range shapes {
		o.watch(t, s, metav1.ListOptions{ResourceVersion: itoa(rev), AllowWatchBookmarks: true})
	}
	old := o.put(t, at, "garbage")
	for _, s := range shapes {
		o.list(t, s)
		o.watch(t, s, metav1.ListOptions{SendInitialEvents: ptr(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
	}
	ns, _, _ := strings.Cut(at, "/")
	o.put(t, ns+"/c", o.object(ns+"/c"))
	o.settle(t)
	if old != "" {
		o.put(t, at, old)
	} else if _, err := o.etcd.Client().Delete(ctx, o.key(at)); err != nil {
		t.Fatal(err)
	}
	o.put(t, ns+"/d", o.object(ns+"/d"))
	o.settle(t)
}

// fence writes a key outside /registry, which no watch sees: etcd's
// revision moves past every watch's start, which etcd wants before it
// answers a progress request on their stream.
func (o *oracle) fence(t testing.TB) {
	t.Helper()
	if _, err := o.etcd.Client().Put(context.Background(), "/cachelab-fence", ""); err != nil {
		t.Fatal(err)
	}
}

func (o *oracle) rev(t testing.TB) int64 {
	t.Helper()
	r, err := o.etcd.Revision(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// reply is what a request got, comparable whole.
type reply struct {
	List   *unstructured.UnstructuredList
	Status *metav1.Status
	Err    string
}

func replyOf(obj runtime.Object, err error) reply {
	var r reply
	var status apierrors.APIStatus
	switch {
	case errors.As(err, &status):
		st := status.Status()
		r.Status = &st
	case err != nil:
		r.Err = err.Error()
	case obj != nil:
		r.List = obj.(*unstructured.UnstructuredList)
	}
	return r
}

// list sends one LIST to both and reports a difference.
func (o *oracle) list(t *testing.T, s shape) {
	t.Helper()
	opts := metav1.ListOptions{FieldSelector: s.fields, LabelSelector: s.labels}
	ours := replyOf(o.ours.ListerWatcher(s.ns).ListWithContext(context.Background(), opts))
	theirs := replyOf(o.theirs.List(o.context(s.ns), internal(t, opts, false)))
	if d := cmp.Diff(theirs, ours); d != "" {
		t.Errorf("LIST in %q %s: apistorage differs from kube-apiserver's registry (-registry +apistorage):\n%s", s.ns, describeOpts(opts), d)
	}
}

// context is a request's context, carrying its path's namespace.
func (o *oracle) context(ns string) context.Context {
	if ns == "" {
		return context.Background()
	}
	return request.WithNamespace(context.Background(), ns)
}

// internal is opts as kube-apiserver's handler gives them to the
// registry: converted and defaulted (the WatchList feature on).
func internal(t testing.TB, opts metav1.ListOptions, isWatch bool) *metainternalversion.ListOptions {
	t.Helper()
	opts.Watch = isWatch
	var in metainternalversion.ListOptions
	if err := metainternalversion.Convert_v1_ListOptions_To_internalversion_ListOptions(&opts, &in, nil); err != nil {
		t.Fatal(err)
	}
	metainternalversion.SetListOptionsDefaults(&in, true)
	return &in
}

func describeOpts(opts metav1.ListOptions) string {
	b, _ := json.Marshal(opts)
	return string(b)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
