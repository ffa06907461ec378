//go:build !lab

// The maintainers' tests of the lab, which CI runs: the reference
// solution passes, the skeleton fails, every check can fail. The lab
// command (go test -tags lab) leaves them out, so that what it prints is
// the learner's sheet alone.

package exercise

import (
	"strconv"
	"testing"

	"github.com/cachelab/cachelab/notebooks/07-watch-cache/exercise/skeleton"
	"github.com/cachelab/cachelab/notebooks/07-watch-cache/exercise/solution"
	"github.com/cachelab/cachelab/notebooks/internal/lab"
)

// The reference solution passes every check.
func TestSolutionPasses(t *testing.T) {
	lab.SolutionPasses(t, Checks(solution.Predict))
}

// The skeleton as handed out, kept in skeleton/predict.go (the learner's
// file may be their work by now), fails the lab, and each failure says
// what kube-apiserver's watch cache does instead.
func TestSkeletonFails(t *testing.T) {
	lab.SkeletonFailsAgainst(t, "kube-apiserver", Checks(skeleton.Predict))
}

// Every check can fail, and says so where the learner can act on it:
// each plausible mistake below fails a check whose message holds the
// words it must (the LIST that differs, named by what it asks, and the
// line of the prediction), and each check is failed by at least one of
// them, so none passes whatever the code does.
func TestEachCheckCanFail(t *testing.T) {
	yours := " (exercise_test.go:" + lineOf(t, "// planted: Predict") + ")"
	mistakes := []struct {
		name string
		f    flaws
		says []string
	}{
		{"no watch cache: every LIST read from etcd", flaws{noCache: true},
			[]string{`LIST rv="0" (step 4, after create shop/c): in kube-apiserver`, "the cache answered", yours, "predicted: etcd answered"}},
		{"the cache never lags etcd", flaws{noLag: true},
			[]string{`LIST rv="0" (step 7, after create shop/d)`, `the cache answered, at resourceVersion "3" with 2 items`, yours, `resourceVersion "6"`}},
		{"the limit honoured at rv 0", flaws{limitAtZero: true},
			[]string{`LIST rv="0" limit=2 (step 5, after LIST rv="0")`, "with 3 items", yours, "with 2 items"}},
		{"the limit ignored everywhere in the cache", flaws{noLimitInCache: true},
			[]string{`LIST rv="2" match=NotOlderThan limit=1 (step 7, after LIST rv="3")`, "with 1 item", yours, "with 3 items"}},
		{"Exact always read from etcd", flaws{exactFromEtcd: true},
			[]string{`LIST rv="3" match=Exact (step 5, after create shop/c)`, "the cache answered", yours, "etcd answered"}},
		{"a consistent read never falls back", flaws{noFallback: true},
			[]string{`LIST rv="" (step 5, after create shop/c)`, "etcd answered", yours, "the cache refused it with 504"}},
		{"an rv past the cache read from etcd", flaws{pastCacheFromEtcd: true},
			[]string{`LIST rv="3" match=NotOlderThan (step 4, after create shop/b)`, "the cache refused it with 504", yours, "etcd answered"}},
		{"an unready cache refuses every LIST", flaws{refuseAllUnready: true},
			[]string{`LIST rv="0" limit=2 (step 9, after LIST rv="2" match=Exact)`, "etcd answered", yours, "the cache refused it with 429"}},
		{"a restart is never ready until released", flaws{restartUnready: true},
			[]string{`LIST rv="3" match=Exact (step 9, after create shop/d)`, "etcd answered", yours, "the cache refused it with 429"}},
		{"revisions counted from 1", flaws{revFromOne: true},
			[]string{`LIST rv="0" (step 4, after create shop/c)`, `resourceVersion "4"`, yours, `resourceVersion "3"`}},
		{"NotOlderThan answered at exactly N", flaws{notOlderExact: true},
			[]string{`LIST rv="3" (step 6, after LIST rv="0" limit=2)`, `resourceVersion "4" with 3 items`, yours, `resourceVersion "3" with 2 items`}},
		{"N with a limit read as NotOlderThan", flaws{limitNotExact: true},
			[]string{`LIST rv="4" limit=5 (step 6, after LIST rv="3" match=Exact)`, `resourceVersion "4"`, yours, `resourceVersion "5"`}},
		{"a restart keeps the old cache's snapshots", flaws{restartKeepsSnapshots: true},
			[]string{`LIST rv="3" match=Exact (step 9, after create shop/d)`, "etcd answered", yours, "the cache answered"}},
		{"an unready cache's exact read at etcd's revision", flaws{unreadyExactAtRev: true},
			[]string{`LIST rv="2" limit=1 (step 11, after LIST rv="" limit=1)`, `resourceVersion "2"`, yours, `resourceVersion "4"`}},
		{"a held restart's snapshots start at the restart, not at its list on release", flaws{sinceAtRestart: true},
			[]string{`LIST rv="3" match=Exact (step 15, after LIST rv="2" match=Exact)`, "etcd answered", yours, "the cache answered"}},
		{"no answer for a LIST the cache refuses with 429", flaws{dropRefused: true},
			[]string{`LIST rv="0" (step 6, after create shop/c): in kube-apiserver`, "the cache refused it with 429", yours, "gave it no answer"}},
		{"an answer for release-cache too", flaws{answerRelease: true},
			[]string{"release-cache (step 10) is not a LIST", yours, "answered it"}},
		{"a consistent read answered at the story's last revision", flaws{endState: true},
			[]string{`changed its answer to LIST rv="" (step 5, after create shop/c) when the story went on to step 8 (release-cache)`, yours}},
		{"no map made for the pods", flaws{noMap: true},
			[]string{"predicting the story up to step 1 (create shop/a): your code panicked at exercise_test.go:" + lineOf(t, "// planted: the nil map") + ", in (*flawed).write: assignment to entry in nil map"}},
	}
	var planted []lab.Mistake
	for _, m := range mistakes {
		f := m.f
		predict := func(steps []Step) []Answer { return f.predict(steps) } // planted: Predict
		planted = append(planted, lab.Mistake{Name: m.name, Checks: Checks(predict), Says: m.says})
	}
	lab.MistakesFail(t, Checks(solution.Predict), planted)
}

// lineOf is the line of this file that ends with marker, where a planted
// mistake is: the line its report must point at.
func lineOf(t *testing.T, marker string) string {
	t.Helper()
	return lab.LineOf(t, "exercise_test.go", marker)
}

// flaws are mistakes a prediction can make; the zero value makes none
// (it is the reference solution, written again with switches).
type flaws struct {
	noCache               bool // answer every LIST from etcd, at its revision
	noLag                 bool // hold-cache changes nothing
	limitAtZero           bool // the cache honours the limit at rv 0
	noLimitInCache        bool // the cache ignores every limit
	exactFromEtcd         bool // Exact (or an rv and a limit) always read from etcd
	noFallback            bool // a consistent read the cache cannot serve gets 504
	pastCacheFromEtcd     bool // an rv past the cache is read from etcd
	refuseAllUnready      bool // an unready cache refuses a LIST with a limit too
	restartUnready        bool // a restart leaves the cache unready until release-cache
	revFromOne            bool // a fresh etcd's first write is revision 1
	notOlderExact         bool // NotOlderThan N (or N, no limit) answered at exactly N
	limitNotExact         bool // N with a limit (no match) read as NotOlderThan
	restartKeepsSnapshots bool // exact reads before a restart still from the cache
	unreadyExactAtRev     bool // an unready cache's exact read at etcd's revision
	sinceAtRestart        bool // a held restart's oldest snapshot is the restart's revision
	dropRefused           bool // no answer for a LIST refused with 429
	answerRelease         bool // an answer for release-cache too
	endState              bool // a consistent read falls back only if the cache is held at the story's end
	noMap                 bool // the pods map is never made
}

type flawed struct {
	f                  flaws
	history            []int
	pods               map[string]bool
	rev, cached, since int
	held, ready        bool
	heldAtEnd          bool
}

func (f flaws) predict(steps []Step) []Answer {
	w := &flawed{f: f, history: []int{0, 0}, pods: map[string]bool{}, rev: 1, cached: 1, since: 1, ready: true}
	if f.revFromOne {
		w.history, w.rev, w.cached, w.since = []int{0}, 0, 0, 0
	}
	if f.noMap {
		w.pods = nil
	}
	for _, st := range steps { // the mistake: a look at the story's end
		switch st.Do {
		case "hold-cache":
			w.heldAtEnd = true
		case "release-cache":
			w.heldAtEnd = false
		}
	}
	var out []Answer
	for _, st := range steps {
		switch st.Do {
		case "create":
			w.write(st.Key, true)
		case "delete":
			w.write(st.Key, false)
		case "hold-cache":
			w.held = true
		case "release-cache":
			w.held, w.cached = false, w.rev
			if !w.ready {
				w.ready = true
				if !f.sinceAtRestart {
					w.since = w.rev
				}
			}
			if f.answerRelease {
				out = append(out, w.answer("cache", w.rev, 0))
			}
		case "restart-apiserver":
			w.ready = !w.held && !f.restartUnready
			w.cached = w.rev
			if !f.restartKeepsSnapshots {
				w.since = w.rev
			}
		case "list":
			a := w.list(st)
			if a.Code == 429 && f.dropRefused {
				continue
			}
			out = append(out, a)
		}
	}
	return out
}

func (w *flawed) write(key string, exists bool) {
	if exists {
		w.pods[key] = true // planted: the nil map
	} else {
		delete(w.pods, key)
	}
	w.history = append(w.history, len(w.pods))
	w.rev++
	if !w.held || w.f.noLag {
		w.cached = w.rev
	}
}

func (w *flawed) list(st Step) Answer {
	f := w.f
	rv, _ := strconv.Atoi(st.ResourceVersion)
	exact := st.ResourceVersionMatch == "Exact" ||
		st.ResourceVersionMatch == "" && st.Limit > 0 && st.ResourceVersion != "" && st.ResourceVersion != "0" && !f.limitNotExact
	behind := w.cached < w.rev
	if f.endState {
		behind = w.heldAtEnd
	}
	switch {
	case f.noCache && exact:
		return w.answer("etcd", rv, st.Limit)
	case f.noCache:
		return w.answer("etcd", w.rev, st.Limit)
	case exact && (f.exactFromEtcd || w.ready && rv <= w.cached && rv < w.since):
		return w.answer("etcd", rv, st.Limit)
	case !w.ready && (st.Limit == 0 || f.refuseAllUnready):
		return Answer{Source: "cache", Code: 429}
	case !w.ready && exact && !f.unreadyExactAtRev:
		return w.answer("etcd", rv, st.Limit)
	case !w.ready:
		return w.answer("etcd", w.rev, st.Limit)
	case st.ResourceVersion == "0" && f.limitAtZero:
		return w.answer("cache", w.cached, st.Limit)
	case st.ResourceVersion == "0":
		return w.answer("cache", w.cached, 0)
	case st.ResourceVersion == "" && behind && f.noFallback:
		return Answer{Source: "cache", Code: 504}
	case st.ResourceVersion == "" && behind:
		return w.answer("etcd", w.rev, st.Limit)
	case st.ResourceVersion == "":
		return w.answer("cache", w.cached, st.Limit)
	case rv > w.cached && f.pastCacheFromEtcd:
		return w.answer("etcd", w.rev, st.Limit)
	case rv > w.cached:
		return Answer{Source: "cache", Code: 504}
	case exact || f.notOlderExact:
		return w.answer("cache", rv, st.Limit)
	}
	return w.answer("cache", w.cached, st.Limit)
}

func (w *flawed) answer(source string, rev int, limit int64) Answer {
	n := w.history[rev]
	if limit > 0 && int64(n) > limit && !(source == "cache" && w.f.noLimitInCache) {
		n = int(limit)
	}
	return Answer{Source: source, ResourceVersion: strconv.Itoa(rev), Items: n}
}
