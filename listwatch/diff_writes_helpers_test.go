package listwatch_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/cachelab/cachelab/listwatch"
)

// outcome is what one step did on one side, in a form go-cmp compares
// whole: the answer or the error, and what is stored after.
type outcome struct {
	Answer   map[string]any // the object answered, normalized; nil for none
	AnswerRV string         // the answer's resourceVersion: "stored before", "stored after" or "new"
	Err      *apiError
	Stored   map[string]any // what is stored after the step, normalized; nil for nothing
	Wrote    bool           // the step changed what is stored (its resourceVersion, or whether there is one)
}

// apiError is an error as a client reads it: the Status's code, reason,
// message and details. Each distinct cause is kept once: kube-apiserver
// runs the ObjectMeta update validation twice on an update (in
// rest.BeforeUpdate, and in the strategy, as its own strategies do) and
// lists its causes twice, though its message says each once.
type apiError struct {
	Code    int32
	Reason  metav1.StatusReason
	Message string
	Group   string
	Kind    string
	Name    string
	Causes  []metav1.StatusCause
	Text    string // an error that is no API Status
}

// runStep makes st's request on s and returns what it did, and the
// object s answered with.
func runStep(ctx context.Context, t *testing.T, s writeSide, st writeStep) (outcome, *unstructured.Unstructured) {
	t.Helper()
	before := stored(ctx, t, s, st.obj)
	out, err := st.do(ctx, s, st.obj, before)
	after := stored(ctx, t, s, st.obj)
	o := outcome{Err: apiErrorOf(err, before), Stored: normalized(after), Wrote: storedRV(before) != storedRV(after)}
	if out != nil {
		o.Answer = normalized(out)
		switch rv := out.GetResourceVersion(); {
		case before != nil && rv == before.GetResourceVersion():
			o.AnswerRV = "stored before"
		case after != nil && rv == after.GetResourceVersion():
			o.AnswerRV = "stored after"
		default:
			o.AnswerRV = "new"
		}
	}
	return o, out
}

// stored is what s stores under name, or nil.
func stored(ctx context.Context, t *testing.T, s writeSide, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := s.get(ctx, name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("get %s: %v", name, err)
	}
	return u
}

func storedRV(u *unstructured.Unstructured) string {
	if u == nil {
		return ""
	}
	return u.GetResourceVersion()
}

// normalized is u without what differs between the sides by
// construction: uid, creationTimestamp, resourceVersion, and
// deletionTimestamp's value (whether there is one is kept).
func normalized(u *unstructured.Unstructured) map[string]any {
	if u == nil {
		return nil
	}
	c := u.DeepCopy().Object
	if md, ok := c["metadata"].(map[string]any); ok {
		delete(md, "uid")
		delete(md, "creationTimestamp")
		delete(md, "resourceVersion")
		if _, ok := md["deletionTimestamp"]; ok {
			md["deletionTimestamp"] = "<set>"
		}
	}
	return c
}

// apiErrorOf reads err as a client would. A message that quotes the
// stored object's uid or resourceVersion (a precondition's conflict)
// has them masked, as each side has its own.
func apiErrorOf(err error, before *unstructured.Unstructured) *apiError {
	if err == nil {
		return nil
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return &apiError{Text: err.Error()}
	}
	st := status.Status()
	a := &apiError{Code: st.Code, Reason: st.Reason, Message: st.Message}
	if before != nil {
		a.Message = strings.NewReplacer("("+string(before.GetUID())+")", "(<uid>)",
			"("+before.GetResourceVersion()+")", "(<rv>)").Replace(a.Message)
	}
	if d := st.Details; d != nil {
		a.Group, a.Kind, a.Name = d.Group, d.Kind, d.Name
		for _, c := range d.Causes {
			if !containsCause(a.Causes, c) {
				a.Causes = append(a.Causes, c)
			}
		}
	}
	return a
}

func containsCause(cs []metav1.StatusCause, c metav1.StatusCause) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}

func revisionOf(t *testing.T, e *listwatch.Embedded) int64 {
	t.Helper()
	r, err := e.Revision(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// openWatch watches s's objects from rv until the test ends.
func openWatch(ctx context.Context, t *testing.T, s writeSide, rv string) watch.Interface {
	t.Helper()
	w, err := s.watch(ctx, rv)
	if err != nil {
		t.Fatalf("watch from %s: %v", rv, err)
	}
	t.Cleanup(w.Stop)
	return w
}

// fence creates an object every step's events come before, on s's own
// keys: a watch has had them all when it has this one.
func fence(ctx context.Context, t *testing.T, s writeSide) {
	t.Helper()
	if _, err := s.create(ctx, configMap(fenceName)); err != nil {
		t.Fatalf("creating the fence: %v", err)
	}
}

// event is a watch event, its object normalized.
type event struct {
	Type   watch.EventType
	Object map[string]any
}

// eventsTo reads w's events up to the ADDED of the object named name,
// which it leaves out.
func eventsTo(t *testing.T, w watch.Interface, name string) []event {
	t.Helper()
	var out []event
	for {
		e := next(t, w)
		u, ok := e.Object.(*unstructured.Unstructured)
		if !ok {
			out = append(out, event{Type: e.Type, Object: map[string]any{"not an object": fmt.Sprintf("%#v", e.Object)}})
			continue
		}
		if e.Type == watch.Added && u.GetName() == name {
			return out
		}
		out = append(out, event{Type: e.Type, Object: normalized(u)})
	}
}

// summary is o in a few words: the answer (its resourceVersion) or the
// error's code and reason; whether the step wrote; what is stored after.
func (o outcome) summary() string {
	answer := "no answer"
	switch {
	case o.Err != nil:
		answer = fmt.Sprintf("%d %s", o.Err.Code, o.Err.Reason)
	case o.Answer != nil:
		answer = "answer: " + o.AnswerRV
	}
	wrote := "no write"
	if o.Wrote {
		wrote = "wrote"
	}
	stored := "gone"
	if o.Stored != nil {
		stored = "stored"
		if md, _ := o.Stored["metadata"].(map[string]any); md["deletionTimestamp"] != nil {
			stored += ", being deleted"
		}
	}
	return answer + "; " + wrote + "; " + stored
}

// eventTypes is each event's type and object name, in order.
func eventTypes(events []event) string {
	s := make([]string, len(events))
	for i, e := range events {
		md, _ := e.Object["metadata"].(map[string]any)
		s[i] = fmt.Sprintf("%s %v", e.Type, md["name"])
	}
	return strings.Join(s, ", ")
}
