package exercise

import (
	"fmt"
	"strings"
	"sync"

	"github.com/cachelab/cachelab/notebooks/internal/lab"
)

// PredictFunc is a prediction to check: yours (Predict) or the
// reference.
type PredictFunc func([]Step) []Answer

// Checks are the behaviours the lab checks. Each plays a story against
// k8s.io/apiserver's real watch cache over a fresh embedded etcd, asks
// predict for the same story, and compares every LIST's answer (same).
func Checks(predict PredictFunc) []lab.Check {
	story := func(steps ...Step) func() error { return func() error { return same(predict, steps) } }
	return []lab.Check{
		{ID: "C1", Behaviour: "rv 0 and NotOlderThan: the cache answers", Run: story(
			create("shop/a"), create("shop/b"), create("shop/c"),
			list("0", "", 0), list("0", "", 2), list("3", "", 0), list("2", "NotOlderThan", 1))},
		{ID: "C1", Behaviour: `rv "": a consistent read from the cache`, Run: story(
			create("shop/a"), create("shop/b"), create("shop/c"),
			list("", "", 0), list("", "", 2))},
		{ID: "C1", Behaviour: "Exact: the cache's snapshots, etcd before them", Run: story(
			create("shop/a"), create("shop/b"), del("shop/a"), create("shop/c"),
			list("3", "Exact", 0), list("4", "", 5), restart(), create("shop/d"),
			list("3", "Exact", 0), list("4", "", 1), list("5", "Exact", 0), list("6", "", 2))},
		{ID: "C2", Behaviour: "a held cache: rv 0 goes back in time", Run: story(
			create("shop/a"), create("shop/b"), hold(), del("shop/a"), create("shop/c"), create("shop/d"),
			list("0", "", 0), list("3", "NotOlderThan", 0), list("2", "Exact", 0), release(), list("0", "", 0))},
		{ID: "C6", Behaviour: "a consistent read waits 3 s, then etcd answers", Run: story(
			create("shop/a"), hold(), create("shop/b"), create("shop/c"),
			list("", "", 0), list("", "", 1), list("0", "", 0), release(), list("", "", 0))},
		{ID: "C6", Behaviour: "any rv past the cache: 504 after 3 s", Run: story(
			create("shop/a"), hold(), create("shop/b"),
			list("3", "NotOlderThan", 0), list("3", "", 0), list("3", "Exact", 0), list("3", "", 1),
			list("2", "NotOlderThan", 0))},
		{ID: "C5", Behaviour: "not ready: a limit goes to etcd, the rest 429", Run: story(
			create("shop/a"), create("shop/b"), hold(), restart(), create("shop/c"),
			list("0", "", 0), list("", "", 0), list("2", "Exact", 0), list("0", "", 2), list("", "", 1), list("2", "", 1),
			release(), list("0", "", 2), list("2", "Exact", 0), list("3", "Exact", 0))},
		{ID: "C5", Behaviour: "a restart without a hold: ready at once", Run: story(
			create("shop/a"), restart(), create("shop/b"), list("0", "", 0), list("", "", 0))},
	}
}

func create(key string) Step { return Step{Do: "create", Key: key} }
func del(key string) Step    { return Step{Do: "delete", Key: key} }
func hold() Step             { return Step{Do: "hold-cache"} }
func release() Step          { return Step{Do: "release-cache"} }
func restart() Step          { return Step{Do: "restart-apiserver"} }
func list(rv, match string, limit int64) Step {
	return Step{Do: "list", ResourceVersion: rv, ResourceVersionMatch: match, Limit: limit}
}

// real memoizes the real cache's answers to each story: every run of
// the checks (yours, the reference's, each mistake's) plays the same
// stories, and the real cache answers each the same way every time.
var realCache sync.Map // story (tell) → realResult

type realResult struct {
	answers []Answer
	err     error
}

func realAnswers(steps []Step) ([]Answer, error) {
	key := tellAll(steps)
	if r, ok := realCache.Load(key); ok {
		return r.(realResult).answers, r.(realResult).err
	}
	answers, err := playReal(steps)
	realCache.Store(key, realResult{answers, err})
	return answers, err
}

// show renders an answer: `the cache answered, at resourceVersion "3"
// with 2 items`, or `the cache refused it with 429`.
func show(a *Answer) string {
	switch {
	case a == nil:
		return "nothing"
	case a.Code != 0:
		return fmt.Sprintf("%s refused it with %d", source(a.Source), a.Code)
	}
	items := fmt.Sprintf("%d items", a.Items)
	if a.Items == 1 {
		items = "1 item"
	}
	return fmt.Sprintf("%s answered, at resourceVersion %q with %s", source(a.Source), a.ResourceVersion, items)
}

func source(s string) string {
	switch s {
	case "cache":
		return "the cache"
	case "":
		return "no one"
	}
	return s
}

// tell renders a step: "create shop/a", "LIST rv=\"0\" limit=2".
func tell(st Step) string {
	if st.Do != "list" {
		return strings.TrimSpace(st.Do + " " + st.Key)
	}
	s := fmt.Sprintf("LIST rv=%q", st.ResourceVersion)
	if st.ResourceVersionMatch != "" {
		s += " match=" + st.ResourceVersionMatch
	}
	if st.Limit > 0 {
		s += fmt.Sprintf(" limit=%d", st.Limit)
	}
	return s
}

func tellAll(steps []Step) string {
	parts := make([]string, len(steps))
	for i, st := range steps {
		parts[i] = tell(st)
	}
	return strings.Join(parts, ", ")
}
