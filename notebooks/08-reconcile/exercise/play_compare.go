package exercise

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cachelab/cachelab/notebooks/internal/lab"
)

// compareTurn compares what one turn did on each side: the calls, in
// client-go's order, the way the turn ended, then the queue's state.
// Where it finds a difference, it says what it is, at which line of
// loop's, and, for the mistakes the chapter warns about, why it matters.
func compareTurn(label string, loop LoopFunc, want, got *recorder, wantEnd, gotEnd ending) error {
	w, g := want.take(), got.take()
	k := firstDifference(w, g)
	if k < 0 && wantEnd.returned == gotEnd.returned && wantEnd.panicked == gotEnd.panicked {
		if ws, gs := want.state(), got.state(); ws != gs {
			return fmt.Errorf("%s: yours, %s, made the same calls, but then\nclient-go's queue holds %s;\nyours holds %s",
				label, lab.Func(loop), ws, gs)
		}
		return nil
	}
	return fmt.Errorf("%s:\nclient-go's loop called %s, and %s;\nyours, %s, called %s, and %s.%s",
		label, calls(w), wantEnd, lab.Func(loop), calls(g), gotEnd, explain(k, w, g, wantEnd, want, got))
}

// firstDifference is the index of the first call where two turns differ,
// -1 if they made the same calls. client-go's loop makes them in a fixed
// order: Get, reconcile, the requeue, Done last (deferred). The requeue
// calls, made in a row (Forget, AddAfter, AddRateLimited), come to the
// same in any order, and are compared as a set.
func firstDifference(want, got []call) int {
	w, g := canonical(want), canonical(got)
	for i := range min(len(w), len(g)) {
		if w[i].text != g[i].text {
			return i
		}
	}
	if len(w) == len(g) {
		return -1
	}
	return min(len(w), len(g))
}

// canonical sorts each run of requeue calls.
func canonical(calls []call) []call {
	out := slices.Clone(calls)
	for i := 0; i < len(out); {
		j := i
		for j < len(out) && requeue(out[j].text) {
			j++
		}
		slices.SortStableFunc(out[i:j], func(a, b call) int { return strings.Compare(a.text, b.text) })
		i = max(j, i+1)
	}
	return out
}

func requeue(text string) bool {
	for _, p := range []string{"Forget(", "AddAfter(", "AddRateLimited(", "Add("} {
		if strings.HasPrefix(text, p) {
			return true
		}
	}
	return false
}

// explain says how two turns' calls differ (k is the first call that
// differs, in canonical order; k < 0 when only their endings do), and
// why it matters when it is a mistake the chapter warns about.
func explain(k int, w, g []call, wantEnd ending, want, got *recorder) string {
	missing, extra := missingAndExtra(w, g)
	switch {
	case k < 0 && wantEnd.panicked:
		return "\nclient-go's loop does not recover a reconcile's panic: it goes on up to the worker (sample-controller's HandleCrash logs it and crashes the process); only the deferred Done runs on the way."
	case k < 0 && !wantEnd.returned:
		return "\nGet reported the shutdown: false is how the worker learns it, since sample-controller's runWorker calls it in `for c.processNextWorkItem(ctx) {}`; true keeps the worker spinning."
	case k < 0:
		return "\nfalse stops the worker (sample-controller's runWorker loops while it is true): return false only when Get reports the shutdown."
	case len(missing) == 0 && len(extra) == 0:
		return outOfOrder(canonical(w)[k], canonical(g)[k])
	case len(missing) > 0 && strings.HasPrefix(missing[0].text, "Get() → ") && !slices.ContainsFunc(g, isGet):
		s := "\nYours never calls Get, so it takes no key."
		if want.inner.ShuttingDown() {
			s += " After ShutDown, Get still hands out what is queued (W3): the workers drain the queue, and a turn returns false only when Get reports the shutdown."
		}
		return s
	case len(missing) == 1 && len(extra) == 1:
		return fmt.Sprintf("\nYours makes %s%s where client-go's loop makes %s.", extra[0].text, at(extra[0]), missing[0].text)
	}
	var b strings.Builder
	for _, c := range missing {
		fmt.Fprintf(&b, "\nYours never makes client-go's %s.", c.text)
		if key := strings.TrimSuffix(strings.TrimPrefix(c.text, "Done("), ")"); strings.HasPrefix(c.text, "Done(") && got.held[key] {
			b.WriteString(" " + heldForEver(key, wantEnd.panicked, want, got))
		}
	}
	for _, c := range extra {
		fmt.Fprintf(&b, "\nYours makes %s%s, which client-go's loop does not.", c.text, at(c))
		switch {
		case c.text == "Done()" && slices.ContainsFunc(g, func(x call) bool { return x.text == "Get() → shut down" }):
			b.WriteString(" Get reported the shutdown and handed out no key: there is nothing to mark Done.")
		case strings.HasPrefix(c.text, "Done("):
			b.WriteString(" Each Get has exactly one Done (W2): a second Done of a key added meanwhile queues it twice (W4).")
		}
	}
	return b.String()
}

func isGet(c call) bool { return strings.HasPrefix(c.text, "Get()") }

// missingAndExtra are the calls of want that got does not make, and the
// calls of got that want does not, counted as multisets.
func missingAndExtra(want, got []call) (missing, extra []call) {
	left := slices.Clone(got)
	for _, c := range want {
		i := slices.IndexFunc(left, func(x call) bool { return x.text == c.text })
		if i < 0 {
			missing = append(missing, c)
			continue
		}
		left = slices.Delete(left, i, i+1)
	}
	return missing, left
}

// outOfOrder explains the same calls made in another order.
func outOfOrder(w, g call) string {
	s := fmt.Sprintf("\nYours makes the same calls in another order: %s%s where client-go's loop makes %s.", g.text, at(g), w.text)
	if strings.HasPrefix(g.text, "Done(") {
		s += " client-go's loop calls Done last (deferred): until Done no other worker can Get the key (W2). " +
			"A Done before reconcile lets a second worker reconcile the key at the same time; " +
			"a Done before the requeue lets one take it before this turn's Forget, AddAfter or AddRateLimited is made."
	}
	return s
}

// heldForEver shows what a Done that did not run costs: it adds key
// again on both queues, where client-go's queues it and yours cannot.
func heldForEver(key string, panicked bool, want, got *recorder) string {
	wl, gl := want.inner.Len(), got.inner.Len()
	want.inner.Add(key)
	got.inner.Add(key)
	s := fmt.Sprintf("Without it %s stays held by a worker for ever: "+
		"Add(%s) after this turn takes client-go's queue from Len %d to %d, and yours from Len %d to %d (%s is only marked dirty), and no Get hands it out again.",
		key, key, wl, want.inner.Len(), gl, got.inner.Len(), key)
	if got.doneAt != "" {
		s = fmt.Sprintf("Your Done, at %s, was not reached on this turn. ", got.doneAt) + s
	}
	if panicked {
		s = "client-go's loop defers Done, so it runs even when reconcile panics. " + s +
			" (A worker does live on after a panic whenever something recovers it: controller-runtime does, and so does HandleCrash with utilruntime.ReallyCrash false.)"
	}
	return s
}

func at(c call) string {
	if c.at == "" {
		return ""
	}
	return " (at " + c.at + ")"
}

func calls(c []call) string {
	if len(c) == 0 {
		return "nothing"
	}
	texts := make([]string, len(c))
	for i, x := range c {
		texts[i] = x.text
	}
	return strings.Join(texts, ", ")
}
