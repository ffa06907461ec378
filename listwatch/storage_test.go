package listwatch_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/cachelab/cachelab/listwatch"
)

// Objects are stored as JSON without resourceVersion under
// /registry/<resource>/<ns>/<name>; reads stamp the mod revision. (E1)
func TestE1ResourceModel(t *testing.T) {
	wd := newWorld(t)
	created := wd.create(t, pod("ns1/web"))
	raw, err := wd.etcd.Client().Get(context.Background(), "/registry/pods/ns1/web")
	if err != nil || len(raw.Kvs) != 1 {
		t.Fatalf("raw get: %v %v", raw, err)
	}
	var stored map[string]any
	if err := json.Unmarshal(raw.Kvs[0].Value, &stored); err != nil {
		t.Fatal(err)
	}
	if _, has := stored["metadata"].(map[string]any)["resourceVersion"]; has {
		t.Errorf("stored value carries a resourceVersion: %s", raw.Kvs[0].Value)
	}
	got, err := wd.w.Get(context.Background(), "ns1", "web")
	if err != nil {
		t.Fatal(err)
	}
	if want := strconv.FormatInt(raw.Kvs[0].ModRevision, 10); got.GetResourceVersion() != want || created.GetResourceVersion() != want {
		t.Errorf("resourceVersion: get %s, create %s, want mod revision %s", got.GetResourceVersion(), created.GetResourceVersion(), want)
	}
	if got.GetUID() != "uid-1" || got.GetCreationTimestamp().Time.IsZero() {
		t.Errorf("create did not set uid and creationTimestamp: %v", got.Object["metadata"])
	}
}

// A whole number reads back as the int64 it was written as, as
// kube-apiserver's decoder reads it: what a read returns is what the
// write answered, and unstructured's accessors find the number. (E1)
func TestE1WholeNumbersReadAsInt64(t *testing.T) {
	wd := newWorld(t)
	in := pod("ns1/web")
	if err := unstructured.SetNestedField(in.Object, int64(3), "spec", "priority"); err != nil {
		t.Fatal(err)
	}
	created := wd.create(t, in)
	got, err := wd.w.Get(context.Background(), "ns1", "web")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(created.Object, got.Object); d != "" {
		t.Errorf("read differs from what create answered (-create +get):\n%s", d)
	}
	if n, ok, err := unstructured.NestedInt64(got.Object, "spec", "priority"); !ok || err != nil || n != 3 {
		t.Errorf("NestedInt64(spec.priority) = %d, %v, %v; want 3, true, nil", n, ok, err)
	}
}

// Optimistic concurrency and API errors. (E2)
func TestE2Writes(t *testing.T) {
	ctx := context.Background()
	wd := newWorld(t)
	v1 := wd.create(t, pod("ns1/web"))
	if _, err := wd.w.Create(ctx, pod("ns1/web")); !apierrors.IsAlreadyExists(err) {
		t.Errorf("second create: %v, want AlreadyExists", err)
	}
	withRV := pod("ns1/other")
	withRV.SetResourceVersion("5")
	if _, err := wd.w.Create(ctx, withRV); !apierrors.IsBadRequest(err) {
		t.Errorf("create with resourceVersion: %v, want BadRequest", err)
	}
	v2in := v1.DeepCopy()
	v2in.SetLabels(map[string]string{"v": "2"})
	v2 := wd.update(t, v2in)
	stale := v1.DeepCopy()
	stale.SetLabels(map[string]string{"v": "stale"})
	_, err := wd.w.Update(ctx, stale)
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), listwatch.OptimisticLockErrorMsg) {
		t.Errorf("stale update: %v, want Conflict with kube's message", err)
	}
	unconditional := pod("ns1/web", "v", "3")
	v3 := wd.update(t, unconditional)
	if v3.GetUID() != v1.GetUID() || rvOf(v3) <= rvOf(v2) {
		t.Errorf("unconditional update: uid %s rv %s", v3.GetUID(), v3.GetResourceVersion())
	}
	before := wd.rev(t)
	same := wd.update(t, pod("ns1/web", "v", "3"))
	if same.GetResourceVersion() != v3.GetResourceVersion() || wd.rev(t) != before {
		t.Errorf("no-op update wrote: rv %s (want %s), revision %d (want %d)", same.GetResourceVersion(), v3.GetResourceVersion(), wd.rev(t), before)
	}
	wrongUID := types.UID("nope")
	if _, err := wd.w.Delete(ctx, "ns1", "web", listwatch.Preconditions{UID: &wrongUID}); !apierrors.IsConflict(err) {
		t.Errorf("delete with wrong uid: %v, want Conflict", err)
	}
	staleRV := v2.GetResourceVersion()
	if _, err := wd.w.Delete(ctx, "ns1", "web", listwatch.Preconditions{ResourceVersion: &staleRV}); !apierrors.IsConflict(err) {
		t.Errorf("delete with stale rv: %v, want Conflict", err)
	}
	last, err := wd.w.Delete(ctx, "ns1", "web", listwatch.Preconditions{})
	if err != nil || last.GetLabels()["v"] != "3" {
		t.Errorf("delete: %v, %v", last, err)
	}
	if _, err := wd.w.Delete(ctx, "ns1", "web", listwatch.Preconditions{}); !apierrors.IsNotFound(err) {
		t.Errorf("delete of missing: %v, want NotFound", err)
	}
	if _, err := wd.w.Update(ctx, pod("ns1/web")); !apierrors.IsNotFound(err) {
		t.Errorf("update of missing: %v, want NotFound", err)
	}
}

// LIST reads at one revision, with kube-apiserver's RV rules. (E3)
func TestE3ListResourceVersions(t *testing.T) {
	wd := newWorld(t)
	x := wd.create(t, pod("a/x"))
	wd.create(t, pod("a/y"))
	mid := wd.rev(t)
	x.SetLabels(map[string]string{"v": "2"})
	wd.update(t, x)
	wd.create(t, pod("a/z"))
	now := wd.rev(t)

	latest := wd.list(t, metav1.ListOptions{})
	if rvOf(latest) != now || len(latest.Items) != 3 {
		t.Errorf(`RV "": rv %s items %v, want rv %d and 3 items`, latest.GetResourceVersion(), names(latest), now)
	}
	if l := wd.list(t, metav1.ListOptions{ResourceVersion: "0"}); rvOf(l) != now {
		t.Errorf(`RV "0": rv %s, want %d`, l.GetResourceVersion(), now)
	}
	exact := wd.list(t, metav1.ListOptions{ResourceVersion: strconv.FormatInt(mid, 10), ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	if rvOf(exact) != mid || len(exact.Items) != 2 || exact.Items[0].GetLabels() != nil {
		t.Errorf("Exact %d: rv %s items %v", mid, exact.GetResourceVersion(), names(exact))
	}
	legacyPaged := wd.list(t, metav1.ListOptions{ResourceVersion: strconv.FormatInt(mid, 10), Limit: 10})
	if rvOf(legacyPaged) != mid {
		t.Errorf("legacy RV with limit reads exactly: rv %s, want %d", legacyPaged.GetResourceVersion(), mid)
	}
	notOlder := wd.list(t, metav1.ListOptions{ResourceVersion: strconv.FormatInt(mid, 10), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
	if rvOf(notOlder) != now {
		t.Errorf("NotOlderThan %d: rv %s, want latest %d", mid, notOlder.GetResourceVersion(), now)
	}

	future := strconv.FormatInt(now+100, 10)
	for _, opts := range []metav1.ListOptions{
		{ResourceVersion: future, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan},
		{ResourceVersion: future, ResourceVersionMatch: metav1.ResourceVersionMatchExact},
		{ResourceVersion: future},
	} {
		_, err := wd.lw.List(opts)
		if !apierrors.IsTimeout(err) || !apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
			t.Errorf("future RV %+v: %v, want 504 with cause ResourceVersionTooLarge", opts, err)
		}
	}

	if err := wd.etcd.Compact(context.Background(), now); err != nil {
		t.Fatal(err)
	}
	_, err := wd.lw.List(metav1.ListOptions{ResourceVersion: strconv.FormatInt(mid, 10), ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	if !apierrors.IsResourceExpired(err) || !strings.Contains(err.Error(), "The resourceVersion for the provided list is too old.") {
		t.Errorf("compacted Exact: %v, want 410 Expired", err)
	}
}

// Pages are read at the first page's revision; a compacted continue is a
// 410 carrying a token at RV -1. (E4)
func TestE4Pagination(t *testing.T) {
	wd := newWorld(t)
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		wd.create(t, pod("ns/"+n))
	}
	p1 := wd.list(t, metav1.ListOptions{Limit: 2})
	if got := names(p1); !cmp.Equal(got, []string{"ns/a", "ns/b"}) || p1.GetContinue() == "" ||
		p1.GetRemainingItemCount() == nil || *p1.GetRemainingItemCount() != 3 {
		t.Fatalf("page 1: %v continue %q remaining %v", got, p1.GetContinue(), p1.GetRemainingItemCount())
	}
	wd.create(t, pod("ns/bb")) // after the first page: not in this list
	p2 := wd.list(t, metav1.ListOptions{Limit: 2, Continue: p1.GetContinue()})
	p3 := wd.list(t, metav1.ListOptions{Limit: 2, Continue: p2.GetContinue()})
	if got := append(names(p2), names(p3)...); !cmp.Equal(got, []string{"ns/c", "ns/d", "ns/e"}) ||
		p3.GetContinue() != "" || p2.GetResourceVersion() != p1.GetResourceVersion() {
		t.Errorf("pages 2-3: %v, last continue %q, rv %s vs %s", got, p3.GetContinue(), p2.GetResourceVersion(), p1.GetResourceVersion())
	}
	if _, err := wd.lw.List(metav1.ListOptions{ResourceVersion: "3", Continue: p1.GetContinue()}); !apierrors.IsBadRequest(err) {
		t.Errorf("RV with continue: %v, want BadRequest", err)
	}
	filtered := wd.list(t, metav1.ListOptions{Limit: 1, FieldSelector: "metadata.name!=a"})
	if filtered.GetRemainingItemCount() != nil || filtered.GetContinue() == "" {
		t.Errorf("with a selector: remaining %v continue %q, want no count and a token", filtered.GetRemainingItemCount(), filtered.GetContinue())
	}

	if err := wd.etcd.Compact(context.Background(), wd.rev(t)); err != nil {
		t.Fatal(err)
	}
	_, err := wd.lw.List(metav1.ListOptions{Limit: 2, Continue: p1.GetContinue()})
	status, ok := err.(apierrors.APIStatus)
	if !apierrors.IsResourceExpired(err) || !ok || status.Status().ListMeta.Continue == "" {
		t.Fatalf("compacted continue: %v, want 410 with a fresh token", err)
	}
	rest := wd.list(t, metav1.ListOptions{Limit: 10, Continue: status.Status().ListMeta.Continue})
	if got := names(rest); !cmp.Equal(got, []string{"ns/bb", "ns/c", "ns/d", "ns/e"}) {
		t.Errorf("inconsistent continuation read %v, want the rest at the latest revision", got)
	}
	if _, err := wd.lw.List(metav1.ListOptions{Continue: "not-a-token"}); !apierrors.IsBadRequest(err) {
		t.Errorf("malformed token: %v, want BadRequest", err)
	}
}
