package listwatch_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/cachelab/cachelab/listwatch"
)

// kube-apiserver's answers over values it cannot decode (E12), as
// k8s.io/apiserver@v0.37.2 builds them: a LIST's 500 StorageReadError
// from etcd3/corrupt_obj_deleter.go (aggregatedStorageError
// .NewAPIStatusError over storage.NewCorruptObjError), with its
// AllowUnsafeMalformedObjectDeletion gate on (beta, default in 1.37); a
// WATCH's 500 InternalError from etcd3/watcher.go (transformErrorToEvent).
// Only the decoder's own words differ: kube-apiserver's codec against
// encoding/json here.

const garbage = "invalid character 'g' looking for beginning of value"

// corruptCause is kube-apiserver's text for one undecodable key.
func corruptCause(key string, rev int64, decodeErr string) string {
	return "StorageError: corrupt object, Code: 7, Key: " + key + ", ResourceVersion: 0, AdditionalErrorMsg: object not decodable revision=" +
		strconv.FormatInt(rev, 10) + ": " + decodeErr
}

func TestE12ListOverCorruptValues(t *testing.T) {
	ctx := context.Background()
	wd := newWorld(t)
	wd.create(t, pod("ns/a"))
	revB, err := wd.w.PutRaw(ctx, "ns", "b", []byte("garbage"))
	if err != nil {
		t.Fatal(err)
	}
	wd.create(t, pod("ns/c"))
	revD, err := wd.w.PutRaw(ctx, "ns", "d", []byte("{}"))
	if err != nil {
		t.Fatal(err)
	}

	_, err = wd.lw.List(metav1.ListOptions{})
	status, ok := err.(apierrors.APIStatus)
	if !ok {
		t.Fatalf("LIST over corrupt values: %v, want a Status", err)
	}
	first := corruptCause("/registry/pods/ns/b", revB, garbage)
	want := metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Reason: metav1.StatusReasonStoreReadError,
		Message: "failed to read one or more pods from the storage: " + first + " (and 1 more)",
		Details: &metav1.StatusDetails{Kind: "pods", Name: "list", Causes: []metav1.StatusCause{
			{Type: metav1.CauseTypeUnexpectedServerResponse, Field: "/registry/pods/ns/b", Message: first},
			{Type: metav1.CauseTypeUnexpectedServerResponse, Field: "/registry/pods/ns/d",
				Message: corruptCause("/registry/pods/ns/d", revD, "not an object with kind and metadata.name")},
		}}}
	if diff := cmp.Diff(want, status.Status()); diff != "" {
		t.Errorf("LIST status (-kube-apiserver +listwatch):\n%s", diff)
	}
	if !listwatch.IsStorageReadError(err) {
		t.Errorf("IsStorageReadError(%v) = false", err)
	}

	// A page that ends before the bad key is served; one that reaches it fails.
	if p := wd.list(t, metav1.ListOptions{Limit: 1}); !cmp.Equal(names(p), []string{"ns/a"}) {
		t.Errorf("page 1: %v, want ns/a", names(p))
	}

	// Removing the values (or fixing them) ends it.
	for _, n := range []string{"b", "d"} {
		if _, err := wd.w.DeleteRaw(ctx, "ns", n); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := wd.w.DeleteRaw(ctx, "ns", "b"); !apierrors.IsNotFound(err) {
		t.Errorf("DeleteRaw of nothing: %v, want NotFound", err)
	}
	if l := wd.list(t, metav1.ListOptions{}); !cmp.Equal(names(l), []string{"ns/a", "ns/c"}) {
		t.Errorf("after the fix: %v", names(l))
	}
}

func TestE12WatchOverCorruptValues(t *testing.T) {
	ctx := context.Background()
	wd := newWorld(t)
	wd.create(t, pod("ns/a"))
	internal := "ERROR 500 InternalError: Internal error occurred: " + garbage

	// An event carrying the value ends the watch with a 500.
	w, err := wd.lw.Watch(metav1.ListOptions{ResourceVersion: strconv.FormatInt(wd.rev(t), 10)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wd.w.PutRaw(ctx, "ns", "b", []byte("garbage")); err != nil {
		t.Fatal(err)
	}
	if got := describe(next(t, w)); got != internal {
		t.Errorf("put of a corrupt value: %s, want %s", got, internal)
	}
	if _, open := <-w.ResultChan(); open {
		t.Error("the watch goes on after its Error event")
	}

	// Watch-list: the initial events before the value, then the 500.
	wl, err := wd.lw.Watch(metav1.ListOptions{SendInitialEvents: ptr.To(true), AllowWatchBookmarks: true,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ADDED ns/a@2", internal} {
		if got := describe(next(t, wl)); got != want {
			t.Errorf("watch-list: %s, want %s", got, want)
		}
	}

	// Without a selector the old value is not decoded: a fix is MODIFIED.
	// With one, and for a delete, it is, and fails.
	fixed := []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"b","namespace":"ns"}}`)
	plain, err := wd.lw.Watch(metav1.ListOptions{ResourceVersion: strconv.FormatInt(wd.rev(t), 10)})
	if err != nil {
		t.Fatal(err)
	}
	selected, err := wd.lw.Watch(metav1.ListOptions{ResourceVersion: strconv.FormatInt(wd.rev(t), 10), FieldSelector: "metadata.name=b"})
	if err != nil {
		t.Fatal(err)
	}
	rev, err := wd.w.PutRaw(ctx, "ns", "b", fixed)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := describe(next(t, plain)), "MODIFIED ns/b@"+strconv.FormatInt(rev, 10); got != want {
		t.Errorf("fix, no selector: %s, want %s", got, want)
	}
	if got := describe(next(t, selected)); got != internal {
		t.Errorf("fix, with a selector: %s, want %s", got, internal)
	}
	if _, err := wd.w.PutRaw(ctx, "ns", "b", []byte("garbage")); err != nil {
		t.Fatal(err)
	}
	_ = next(t, plain) // the 500 for the new value; the watch ends
	deleting, err := wd.lw.Watch(metav1.ListOptions{ResourceVersion: strconv.FormatInt(wd.rev(t), 10)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wd.w.DeleteRaw(ctx, "ns", "b"); err != nil {
		t.Fatal(err)
	}
	if got := describe(next(t, deleting)); got != internal {
		t.Errorf("delete of a corrupt value: %s, want %s", got, internal)
	}
	for _, w := range []watch.Interface{w, wl, plain, selected, deleting} {
		w.Stop()
	}
}

// An expired continuation, as the simulator asks for it, is the 410 a
// compaction between pages gives (E4).
func TestE4ExpiredContinue(t *testing.T) {
	wd := newWorld(t)
	for _, n := range []string{"a", "b", "c"} {
		wd.create(t, pod("ns/"+n))
	}
	p1 := wd.list(t, metav1.ListOptions{Limit: 1})
	asked := wd.lw.ExpiredContinue(metav1.ListOptions{Limit: 1, Continue: p1.GetContinue()})
	wd.create(t, pod("ns/d"))
	if err := wd.etcd.Compact(context.Background(), wd.rev(t)); err != nil {
		t.Fatal(err)
	}
	_, real := wd.lw.List(metav1.ListOptions{Limit: 1, Continue: p1.GetContinue()})
	if !apierrors.IsResourceExpired(asked) || !cmp.Equal(asked, real) {
		t.Errorf("ExpiredContinue: %#v\nwant what a compaction gives: %#v", asked, real)
	}
	if err := wd.lw.ExpiredContinue(metav1.ListOptions{}); !apierrors.IsBadRequest(err) {
		t.Errorf("without a token: %v, want BadRequest", err)
	}
}
