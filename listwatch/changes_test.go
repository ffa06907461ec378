package listwatch_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cachelab/cachelab/listwatch"
)

// A ListCopy read at a revision holds what a LIST at that revision holds,
// and fails where the LIST fails: after random creates, label changes
// (in and out of a selector), deletes, undecodable raw values and their
// removal, in a namespace and across namespaces, read at the newest
// revision or an older one. The LIST is the reference.
func TestListChangesKeepsAListUpToDate(t *testing.T) {
	t.Parallel() // it waits on etcd, mostly (main_test.go)
	wd := newWorld(t)
	ctx := context.Background()
	rnd := rand.New(rand.NewPCG(7, 28))
	type view = map[string]string // name@rv labels
	describe := func(objs []*unstructured.Unstructured) view {
		v := view{}
		for _, o := range objs {
			v[o.GetNamespace()+"/"+o.GetName()] = o.GetResourceVersion() + " " + o.GetLabels()["v"]
		}
		return v
	}
	for _, tc := range []struct {
		name string
		lw   *listwatch.ListerWatcher
		opts metav1.ListOptions
	}{
		{"everything", wd.lw, metav1.ListOptions{}},
		{"a label selector", wd.lw, metav1.ListOptions{LabelSelector: "v=1"}},
		{"one namespace", listwatch.NewListerWatcher(wd.etcd.Client(), listwatch.Pods, listwatch.Options{Namespace: "ns1"}), metav1.ListOptions{}},
		{"a namespace by field", wd.lw, metav1.ListOptions{FieldSelector: "metadata.namespace=ns0"}},
		{"one name", wd.lw, metav1.ListOptions{FieldSelector: "metadata.namespace=ns0,metadata.name=p1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := listwatch.NewListCopy(tc.lw, tc.opts, func(o *unstructured.Unstructured) *unstructured.Unstructured { return o })
			// What the copy handed out before must not change under its
			// holder's feet, even where the next read hands out the
			// same map.
			var lastGot map[string]*unstructured.Unstructured
			var lastSeen view
			values := func(m map[string]*unstructured.Unstructured) []*unstructured.Unstructured {
				var out []*unstructured.Unstructured
				for _, o := range m {
					out = append(out, o)
				}
				return out
			}
			for range 60 {
				ns, name := "ns"+strconv.Itoa(rnd.IntN(2)), "p"+strconv.Itoa(rnd.IntN(4))
				key := ns + "/" + name
				switch cur, err := wd.w.Get(ctx, ns, name); {
				case err != nil && rnd.IntN(5) == 0:
					if _, err := wd.w.PutRaw(ctx, ns, name, []byte("not json")); err != nil {
						t.Fatal(err)
					}
				case err != nil: // none there, or a raw value: take it away (if any) and create
					_, _ = wd.w.DeleteRaw(ctx, ns, name)
					wd.create(t, pod(key, "v", strconv.Itoa(rnd.IntN(2))))
				case rnd.IntN(3) == 0:
					if _, err := wd.w.Delete(ctx, ns, name, listwatch.Preconditions{}); err != nil {
						t.Fatal(err)
					}
				default:
					cur.SetLabels(map[string]string{"v": strconv.Itoa(rnd.IntN(2)), "n": strconv.Itoa(rnd.IntN(100))})
					wd.update(t, cur)
				}
				rev, err := wd.etcd.Revision(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if rnd.IntN(4) == 0 {
					rev -= int64(rnd.IntN(3)) // an older revision now and then
				}
				opts := tc.opts
				opts.ResourceVersion, opts.ResourceVersionMatch = strconv.FormatInt(rev, 10), metav1.ResourceVersionMatchExact
				want, listErr := tc.lw.ListWithContext(ctx, opts)
				got, copyErr := c.At(ctx, rev)
				if lastGot != nil {
					if d := cmp.Diff(lastSeen, describe(values(lastGot))); d != "" {
						t.Fatalf("at rv %d a map the copy handed out before changed (-then +now):\n%s", rev, d)
					}
				}
				if copyErr == nil {
					lastGot, lastSeen = got, describe(values(got))
				}
				if (listErr == nil) != (copyErr == nil) {
					t.Fatalf("at rv %d: the LIST's error is %v, the copy's %v", rev, listErr, copyErr)
				}
				if listErr != nil {
					continue
				}
				var items []*unstructured.Unstructured
				for i := range want.(*unstructured.UnstructuredList).Items {
					items = append(items, &want.(*unstructured.UnstructuredList).Items[i])
				}
				if d := cmp.Diff(describe(items), describe(values(got))); d != "" {
					t.Fatalf("at rv %d the copy differs from the LIST (-list +copy):\n%s", rev, d)
				}
			}
		})
	}
}
