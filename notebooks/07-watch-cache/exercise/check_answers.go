package exercise

import (
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-cmp/cmp"

	"github.com/cachelab/cachelab/notebooks/internal/lab"
)

// same plays steps against the real cache and asks predict, and says
// where they first differ.
//
// Each LIST's answer is matched to the LIST by identity, not by its
// place in a slice: predict is asked for the story up to each step in
// turn, and the answer a LIST has is the one predict adds when the story
// grows by that LIST. A prediction that skips a LIST, answers a step that
// is not one, or changes an earlier answer when the story goes on (a
// kube-apiserver cannot see what comes after a request) is caught at the
// step where it does so, and the LIST is named by what it asks.
func same(predict PredictFunc, steps []Step) error {
	want, err := realAnswers(steps)
	if err != nil {
		return fmt.Errorf("the lab could not play the story against kube-apiserver's watch cache: %v", err)
	}
	yours := "yours, " + lab.Func(predict) + ","
	var before []Answer // predict's answers to the story up to the step before
	lists := 0          // the LISTs of the story up to this step
	for i, st := range steps {
		var got []Answer
		if err := lab.Safely(func() error { got = predict(slices.Clone(steps[:i+1])); return nil }); err != nil {
			return fmt.Errorf("story: %s\npredicting the story up to step %d (%s): %w", tellAll(steps), i+1, tell(st), err)
		}
		if st.Do == "list" {
			lists++
		}
		if err := sameCount(steps, i, lists, before, got, want, yours); err != nil {
			return fmt.Errorf("story: %s\n%w", tellAll(steps), err)
		}
		if k := changed(before, got); k >= 0 {
			return fmt.Errorf("story: %s\n%s changed its answer to %s when the story went on to step %d (%s): up to the step before it predicted %s, which is kube-apiserver's answer (k8s.io/apiserver v0.37.2); now it predicts %s. A LIST's answer depends only on what happened before it.",
				tellAll(steps), yours, nameList(steps, k), i+1, tell(st), show(&before[k]), show(&got[k]))
		}
		if st.Do == "list" && !cmp.Equal(got[lists-1], want[lists-1]) {
			return fmt.Errorf("story: %s\n%s: in kube-apiserver (k8s.io/apiserver v0.37.2) %s;\n%s predicted: %s.%s",
				tellAll(steps), nameList(steps, lists-1), show(&want[lists-1]), yours, show(&got[lists-1]), diff(&got[lists-1], want[lists-1]))
		}
		before = got
	}
	return nil
}

// sameCount checks that predict gave the story up to step i one answer
// per LIST, and otherwise says which step it failed to answer, or
// answered when it is not a LIST.
func sameCount(steps []Step, i, lists int, before, got, want []Answer, yours string) error {
	st := steps[i]
	switch {
	case len(got) == lists:
		return nil
	case st.Do == "list" && len(got) == len(before):
		return fmt.Errorf("%s: in kube-apiserver (k8s.io/apiserver v0.37.2) %s;\n%s gave it no answer: for the story up to this LIST, which has %s, it returned %s, as many as for the story up to the step before.",
			nameList(steps, lists-1), show(&want[lists-1]), yours, plural(lists, "LIST"), plural(len(got), "answer"))
	case st.Do == "list" && len(got) > len(before):
		return fmt.Errorf("%s: in kube-apiserver (k8s.io/apiserver v0.37.2) %s;\n%s answered it %d times: for the story up to this LIST, which has %s, it returned %s.",
			nameList(steps, lists-1), show(&want[lists-1]), yours, len(got)-len(before), plural(lists, "LIST"), plural(len(got), "answer"))
	case len(got) > len(before):
		return fmt.Errorf("%s (step %d) is not a LIST, but %s answered it: for the story up to it, which has %s, it returned %s, one more than for the story up to the step before. Predict answers each LIST once, in order, and nothing else (kube-apiserver answers a LIST; the other steps happen to it).",
			tell(st), i+1, yours, plural(lists, "LIST"), plural(len(got), "answer"))
	}
	return fmt.Errorf("adding %s (step %d) to the story took an answer away: for the story up to it, which has %s, %s returned %s; up to the step before, %d. A LIST's answer depends only on what happened before it (kube-apiserver cannot see what comes after a request).",
		tell(st), i+1, plural(lists, "LIST"), yours, plural(len(got), "answer"), len(before))
}

// changed is the first of the earlier answers that got no longer gives
// as before did, -1 if none.
func changed(before, got []Answer) int {
	for k := range min(len(before), len(got)) {
		if !cmp.Equal(before[k], got[k]) {
			return k
		}
	}
	return -1
}

// nameList names the story's k-th LIST (from 0) by what it asks, where
// it is, and what comes just before it: `LIST rv="0" limit=2 (step 9,
// after release-cache)`.
func nameList(steps []Step, k int) string {
	for i, st := range steps {
		if st.Do != "list" {
			continue
		}
		if k > 0 {
			k--
			continue
		}
		if i == 0 {
			return fmt.Sprintf("%s (step 1, first)", tell(st))
		}
		return fmt.Sprintf("%s (step %d, after %s)", tell(st), i+1, tell(steps[i-1]))
	}
	return "a LIST the story does not have"
}

// plural renders a count of things: "1 LIST", "2 answers", "no answers".
func plural(n int, thing string) string {
	switch n {
	case 0:
		return "no " + thing + "s"
	case 1:
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// diff is go-cmp's diff of one answer.
func diff(got *Answer, want Answer) string {
	return "\n(-kube-apiserver +yours):\n" + strings.TrimRight(cmp.Diff(want, *got), "\n")
}
