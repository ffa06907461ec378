package listwatch_test

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/cachelab/cachelab/internal/testdeadline"
	"github.com/cachelab/cachelab/listwatch"
)

// world is an embedded etcd with a writer and a ListerWatcher for pods.
type world struct {
	etcd *listwatch.Embedded
	w    *listwatch.Writer
	lw   *listwatch.ListerWatcher
}

func newWorld(t testing.TB) *world {
	e := startEtcd(t)
	n := 0
	w := listwatch.NewWriter(e.Client(), listwatch.Pods, listwatch.WriterOptions{
		NewUID: func() types.UID { n++; return types.UID(fmt.Sprintf("uid-%d", n)) },
		Now:    func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) },
	})
	return &world{etcd: e, w: w, lw: listwatch.NewListerWatcher(e.Client(), listwatch.Pods, listwatch.Options{})}
}

func pod(key string, labels ...string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("Pod")
	ns, name := "default", key
	for i := range key {
		if key[i] == '/' {
			ns, name = key[:i], key[i+1:]
		}
	}
	u.SetNamespace(ns)
	u.SetName(name)
	if len(labels) > 0 {
		l := map[string]string{}
		for i := 0; i+1 < len(labels); i += 2 {
			l[labels[i]] = labels[i+1]
		}
		u.SetLabels(l)
	}
	return u
}

func (wd *world) create(t testing.TB, obj *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	out, err := wd.w.Create(context.Background(), obj)
	if err != nil {
		t.Fatalf("create %s: %v", obj.GetName(), err)
	}
	return out
}

func (wd *world) update(t testing.TB, obj *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	out, err := wd.w.Update(context.Background(), obj)
	if err != nil {
		t.Fatalf("update %s: %v", obj.GetName(), err)
	}
	return out
}

func (wd *world) list(t testing.TB, opts metav1.ListOptions) *unstructured.UnstructuredList {
	t.Helper()
	out, err := wd.lw.ListWithContext(context.Background(), opts)
	if err != nil {
		t.Fatalf("list %+v: %v", opts, err)
	}
	return out.(*unstructured.UnstructuredList)
}

func (wd *world) rev(t testing.TB) int64 {
	t.Helper()
	r, err := wd.etcd.Revision(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func rvOf(obj interface{ GetResourceVersion() string }) int64 {
	n, _ := strconv.ParseInt(obj.GetResourceVersion(), 10, 64)
	return n
}

func names(l *unstructured.UnstructuredList) []string {
	var out []string
	for _, it := range l.Items {
		out = append(out, it.GetNamespace()+"/"+it.GetName())
	}
	return out
}

// next reads the next event or fails at the test binary's deadline
// (package testdeadline: a guard against hangs, not a timing
// assumption). Run with CACHELAB_DUMP=1 to print every goroutine's stack
// when that happens.
func next(t testing.TB, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case e, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed")
		}
		return e
	case <-testdeadline.Context(t).Done():
		if os.Getenv("CACHELAB_DUMP") != "" {
			_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 2)
		}
		t.Fatal("no watch event by the test binary's deadline")
	}
	return watch.Event{}
}

// describe renders an event as "TYPE ns/name@rv".
func describe(e watch.Event) string {
	switch o := e.Object.(type) {
	case *unstructured.Unstructured:
		s := fmt.Sprintf("%s %s/%s@%s", e.Type, o.GetNamespace(), o.GetName(), o.GetResourceVersion())
		if a := o.GetAnnotations()[metav1.InitialEventsAnnotationKey]; a != "" {
			s += " initial-events-end"
		}
		return s
	case *metav1.Status:
		return fmt.Sprintf("%s %d %s: %s", e.Type, o.Code, o.Reason, o.Message)
	}
	return fmt.Sprintf("%s %T", e.Type, e.Object)
}
