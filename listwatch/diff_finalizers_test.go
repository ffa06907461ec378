package listwatch_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/cachelab/cachelab/listwatch"
)

// TestDiffE18DeletionHeldByFinalizers: an object with finalizers lives
// through its deletion the same under the Writer as under kube-apiserver's
// generic registry (registry/generic/registry/store.go Delete,
// updateForGracefulDeletionAndFinalizers, markAsDeleting, Update,
// ShouldDeleteDuringUpdate, deleteWithoutFinalizers; rest/update.go
// BeforeUpdate; apimachinery's ValidateObjectMetaAccessorUpdate). (E18)
// Around it, the ways a client can try to make an object look deleted
// are held to the same: a create carrying deletionTimestamp (the create
// handler wipes it, rest.WipeObjectMetaSystemFields), an update setting
// or changing the deletion fields (422), and a delete's preconditions
// (409 in rest.BeforeDelete's words).
//
// Each step goes to both sides (diff_registry_test.go); what each
// answers (the object, or the error's code, reason and message), what
// it stores after, whether it wrote, and at the end every event its
// watch got from before the first step, are compared with go-cmp. A
// uid, a creationTimestamp and a deletionTimestamp's value differ by
// construction (the registry takes the wall clock and random uids) and
// are left out; so are resourceVersions, each side having its own keys
// on the one etcd, but whether an answer's resourceVersion is the one
// stored before, the one stored after, or another is compared. One
// difference is known, and held as it is (deleteRV).
func TestDiffE18DeletionHeldByFinalizers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, ours, theirs := newWriteSides(t, listwatch.ConfigMaps, "ns")
	start := itoa(revisionOf(t, e))
	wOurs, wTheirs := openWatch(ctx, t, ours, start), openWatch(ctx, t, theirs, start)

	for _, st := range finalizerSteps() {
		a, answer := runStep(ctx, t, ours, st)
		b, _ := runStep(ctx, t, theirs, st)
		if got := b.summary(); got != st.want {
			t.Errorf("%s: the registry did %q, want %q (the oracle is not doing what the step is for)", st.name, got, st.want)
		}
		if got := listwatch.Finalized(answer); got != st.finalizes {
			t.Errorf("%s: listwatch.Finalized(the Writer's answer) = %v, want %v", st.name, got, st.finalizes)
		}
		if st.deleteRV {
			// Writer.Delete answers with the object's last state at its
			// last write's resourceVersion; the registry stamps it with
			// the delete's revision (etcd3 conditionalDelete decodes it at
			// txnResp.Revision). The simulator's traces print the
			// Writer's ("delete ns/a@3 (at rv 5)"), so it is held to its
			// own word here, and a change to either side shows.
			if a.AnswerRV != "stored before" || b.AnswerRV != "new" {
				t.Errorf("%s: answer's resourceVersion: Writer %q, registry %q; want \"stored before\" and \"new\"", st.name, a.AnswerRV, b.AnswerRV)
			}
			a.AnswerRV = b.AnswerRV
		}
		if d := cmp.Diff(b, a); d != "" {
			t.Errorf("%s: the Writer differs from kube-apiserver's registry (-registry +Writer):\n%s", st.name, d)
		}
	}

	fence(ctx, t, ours)
	fence(ctx, t, theirs)
	evOurs, evTheirs := eventsTo(t, wOurs, fenceName), eventsTo(t, wTheirs, fenceName)
	want := "ADDED x, MODIFIED x, MODIFIED x, DELETED x, ADDED y, DELETED y, ADDED z, MODIFIED z, DELETED z, ADDED g, MODIFIED g, DELETED g"
	if got := eventTypes(evTheirs); got != want {
		t.Errorf("the registry's watch got %s, want %s", got, want)
	}
	if d := cmp.Diff(evTheirs, evOurs); d != "" {
		t.Errorf("watch events differ (-registry +Writer):\n%s", d)
	}
}

// writeStep is one request, made on each side from what that side
// stores of obj before it.
type writeStep struct {
	name      string
	obj       string
	do        stepFunc
	want      string // what the registry does (outcome.summary)
	finalizes bool   // the Writer's answer is an update that deleted (listwatch.Finalized)
	deleteRV  bool   // a delete that removes at once: see the test
}

const (
	finA, finB, finC = "example.com/a", "example.com/b", "example.com/c"
	fenceName        = "zz-fence"
)

// finalizerSteps are E18's life of an object with finalizers (x), the
// delete without finalizers beside it (y), and an object a client tries
// to create, then to update, as being deleted (z).
func finalizerSteps() []writeStep {
	return []writeStep{
		{name: "create x with finalizers a and b", obj: "x", do: create(configMap("x", finA, finB)),
			want: "answer: stored after; wrote; stored"},
		{name: "delete x: marked as being deleted", obj: "x", do: remove(none),
			want: "answer: stored after; wrote; stored, being deleted"},
		{name: "delete x again: nothing changes", obj: "x", do: remove(none),
			want: "answer: stored before; no write; stored, being deleted"},
		{name: "update x to finalizer a alone, sent without deletionTimestamp: kept", obj: "x", do: put(fresh(configMap("x", finA))),
			want: "answer: stored after; wrote; stored, being deleted"},
		{name: "update x adding finalizer c: refused", obj: "x",
			do:   put(edit(func(u *unstructured.Unstructured) { u.SetFinalizers([]string{finA, finC}) })),
			want: "422 Invalid; no write; stored, being deleted"},
		{name: "update x with another deletionGracePeriodSeconds: refused", obj: "x",
			do:   put(edit(func(u *unstructured.Unstructured) { u.SetDeletionGracePeriodSeconds(ptrTo[int64](30)) })),
			want: "422 Invalid; no write; stored, being deleted"},
		{name: "delete x with a stale resourceVersion: conflict", obj: "x",
			do: remove(func(*unstructured.Unstructured) listwatch.Preconditions {
				return listwatch.Preconditions{ResourceVersion: ptrTo("1")}
			}),
			want: "409 Conflict; no write; stored, being deleted"},
		{name: "delete x with another uid: conflict", obj: "x",
			do: remove(func(*unstructured.Unstructured) listwatch.Preconditions {
				return listwatch.Preconditions{UID: ptrTo(types.UID("nope"))}
			}),
			want: "409 Conflict; no write; stored, being deleted"},
		{name: "update x without finalizers: deleted", obj: "x", finalizes: true,
			do:   put(edit(func(u *unstructured.Unstructured) { u.SetFinalizers(nil) })),
			want: "answer: stored before; wrote; gone"},
		{name: "update x, gone", obj: "x", do: put(fresh(configMap("x"))), want: "404 NotFound; no write; gone"},
		{name: "delete x, gone", obj: "x", do: remove(none), want: "404 NotFound; no write; gone"},
		{name: "create y without finalizers", obj: "y", do: create(configMap("y")), want: "answer: stored after; wrote; stored"},
		{name: "delete y: removed at once", obj: "y", do: remove(none), deleteRV: true, want: "answer: new; wrote; gone"},
		{name: "create z as if being deleted (and with a selfLink), with finalizer a: created live", obj: "z",
			do: create(beingDeleted(configMap("z", finA))), want: "answer: stored after; wrote; stored"},
		{name: "update z setting deletionTimestamp: refused", obj: "z",
			do: put(edit(setDeletionTimestamp)), want: "422 Invalid; no write; stored"},
		{name: "delete z with preconditions that hold: marked as being deleted", obj: "z",
			do: remove(func(stored *unstructured.Unstructured) listwatch.Preconditions {
				return listwatch.Preconditions{UID: ptrTo(stored.GetUID()), ResourceVersion: ptrTo(stored.GetResourceVersion())}
			}),
			want: "answer: stored after; wrote; stored, being deleted"},
		{name: "update z without finalizers and without resourceVersion: deleted", obj: "z", finalizes: true,
			do: put(fresh(configMap("z"))), want: "answer: stored before; wrote; gone"},
		// An object with a generation (a custom resource's, which
		// kube-apiserver's registry keeps one for): the first mark raises
		// it, a second delete does not.
		{name: "create g with generation 1 and finalizer a", obj: "g", do: create(withGeneration(configMap("g", finA), 1)),
			want: "answer: stored after; wrote; stored"},
		{name: "delete g: marked as being deleted, its generation raised", obj: "g", do: remove(none),
			want: "answer: stored after; wrote; stored, being deleted"},
		{name: "delete g again: nothing changes", obj: "g", do: remove(none),
			want: "answer: stored before; no write; stored, being deleted"},
		{name: "update g without finalizers: deleted", obj: "g", finalizes: true,
			do:   put(edit(func(u *unstructured.Unstructured) { u.SetFinalizers(nil) })),
			want: "answer: stored before; wrote; gone"},
	}
}

func withGeneration(u *unstructured.Unstructured, g int64) *unstructured.Unstructured {
	u.SetGeneration(g)
	return u
}

// stepFunc makes a step's request on one side, given what that side
// stores under the step's object's name (nil for nothing).
type stepFunc func(ctx context.Context, s writeSide, name string, stored *unstructured.Unstructured) (*unstructured.Unstructured, error)

func create(obj *unstructured.Unstructured) stepFunc {
	return func(ctx context.Context, s writeSide, _ string, _ *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		return s.create(ctx, obj.DeepCopy())
	}
}

// put updates with the request made from what is stored.
func put(request func(stored *unstructured.Unstructured) *unstructured.Unstructured) stepFunc {
	return func(ctx context.Context, s writeSide, _ string, stored *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		req := request(stored)
		if req == nil {
			return nil, errors.New("test: nothing stored to edit")
		}
		return s.update(ctx, req)
	}
}

// fresh is a request made afresh, whatever is stored: without uid or
// resourceVersion (an unconditional update), or deletionTimestamp.
func fresh(u *unstructured.Unstructured) func(*unstructured.Unstructured) *unstructured.Unstructured {
	return func(*unstructured.Unstructured) *unstructured.Unstructured { return u.DeepCopy() }
}

// edit is a client's GET-modify-PUT: the stored object, changed by f,
// with its uid and resourceVersion as preconditions.
func edit(f func(*unstructured.Unstructured)) func(*unstructured.Unstructured) *unstructured.Unstructured {
	return func(stored *unstructured.Unstructured) *unstructured.Unstructured {
		if stored == nil {
			return nil
		}
		u := stored.DeepCopy()
		f(u)
		return u
	}
}

// none is a delete without preconditions.
func none(*unstructured.Unstructured) listwatch.Preconditions { return listwatch.Preconditions{} }

func remove(pre func(stored *unstructured.Unstructured) listwatch.Preconditions) stepFunc {
	return func(ctx context.Context, s writeSide, name string, stored *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		p := listwatch.Preconditions{}
		if stored != nil {
			p = pre(stored)
		}
		return s.delete(ctx, name, p)
	}
}

func configMap(name string, finalizers ...string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"data": map[string]any{"k": "v"}}}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetNamespace("ns")
	u.SetName(name)
	if len(finalizers) > 0 {
		u.SetFinalizers(finalizers)
	}
	return u
}

// beingDeleted is u with the system fields a create may not set: as if
// it were being deleted, and with a selfLink.
func beingDeleted(u *unstructured.Unstructured) *unstructured.Unstructured {
	setDeletionTimestamp(u)
	u.SetDeletionGracePeriodSeconds(ptrTo[int64](5))
	u.SetSelfLink("/api/v1/namespaces/ns/configmaps/" + u.GetName())
	return u
}

// setDeletionTimestamp sets one fixed time, the same on both sides, so
// that an error quoting it reads the same.
func setDeletionTimestamp(u *unstructured.Unstructured) {
	ts := metav1.NewTime(diffEpoch)
	u.SetDeletionTimestamp(&ts)
}

func ptrTo[T any](v T) *T { return &v }
