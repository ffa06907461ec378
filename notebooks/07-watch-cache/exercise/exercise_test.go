package exercise

import (
	"strconv"
	"testing"

	"go.uber.org/goleak"

	"github.com/cachelab/cachelab/notebooks/07-watch-cache/exercise/solution"
	"github.com/cachelab/cachelab/notebooks/internal/lab"
)

// Every story starts and stops an etcd and a watch cache: none may leave
// a goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The reference solution passes every check.
func TestSolutionPasses(t *testing.T) {
	lab.SolutionPasses(t, Checks(solution.Predict))
}

// skeletonSum is the SHA-256 of predict.go as committed: the untouched
// skeleton. Once you edit predict.go this test steps aside.
const skeletonSum = "cd3c7914b3d42d35b6471619af2d380da1105208f89522b8c8e6f4a8cde65942"

// The untouched skeleton fails the lab, and each failure says what
// kube-apiserver's watch cache does instead.
func TestSkeletonFails(t *testing.T) {
	lab.SkeletonFailsAgainst(t, "kube-apiserver", "predict.go", skeletonSum, Checks(Predict))
}

// Every check can fail: each is failed by at least one of these plausible
// mistakes, so none passes whatever the code does.
func TestEachCheckCanFail(t *testing.T) {
	mistakes := map[string]flaws{
		"no watch cache: every LIST read from etcd": {noCache: true},
		"the cache never lags etcd":                 {noLag: true},
		"the limit honoured at rv 0":                {limitAtZero: true},
		"the limit ignored everywhere in the cache": {noLimitInCache: true},
		"Exact always read from etcd":               {exactFromEtcd: true},
		"a consistent read never falls back":        {noFallback: true},
		"an rv past the cache read from etcd":       {pastCacheFromEtcd: true},
		"an unready cache refuses every LIST":       {refuseAllUnready: true},
		"a restart is never ready until released":   {restartUnready: true},
	}
	runs := map[string][]lab.Check{}
	for name, f := range mistakes {
		runs[name] = Checks(f.predict)
		if lab.Passed(lab.Run(runs[name])) {
			t.Errorf("mistake %q passes every check", name)
		}
	}
	lab.EachCanFail(t, Checks(solution.Predict), runs)
}

// flaws are mistakes a prediction can make; the zero value makes none
// (it is the reference solution, written again with switches).
type flaws struct {
	noCache           bool // answer every LIST from etcd, at its revision
	noLag             bool // hold-cache changes nothing
	limitAtZero       bool // the cache honours the limit at rv 0
	noLimitInCache    bool // the cache ignores every limit
	exactFromEtcd     bool // Exact (or an rv and a limit) always read from etcd
	noFallback        bool // a consistent read the cache cannot serve gets 504
	pastCacheFromEtcd bool // an rv past the cache is read from etcd
	refuseAllUnready  bool // an unready cache refuses a LIST with a limit too
	restartUnready    bool // a restart leaves the cache unready until release-cache
}

type flawed struct {
	f                    flaws
	history              []int
	pods                 map[string]bool
	rev, cached, since   int
	held, ready, restart bool
}

func (f flaws) predict(steps []Step) []Answer {
	w := &flawed{f: f, history: []int{0, 0}, pods: map[string]bool{}, rev: 1, cached: 1, since: 1, ready: true}
	var out []Answer
	for _, st := range steps {
		switch st.Do {
		case "create", "delete":
			if st.Do == "create" {
				w.pods[st.Key] = true
			} else {
				delete(w.pods, st.Key)
			}
			w.history = append(w.history, len(w.pods))
			w.rev++
			if !w.held || f.noLag {
				w.cached = w.rev
			}
		case "hold-cache":
			w.held = true
		case "release-cache":
			w.held, w.cached = false, w.rev
			if !w.ready {
				w.ready, w.since = true, w.rev
			}
		case "restart-apiserver":
			w.ready = !w.held && !f.restartUnready
			w.cached, w.since = w.rev, w.rev
		case "list":
			out = append(out, w.list(st))
		}
	}
	return out
}

func (w *flawed) list(st Step) Answer {
	f := w.f
	rv, _ := strconv.Atoi(st.ResourceVersion)
	exact := st.ResourceVersionMatch == "Exact" ||
		st.ResourceVersionMatch == "" && st.Limit > 0 && st.ResourceVersion != "" && st.ResourceVersion != "0"
	switch {
	case f.noCache && exact:
		return w.answer("etcd", rv, st.Limit)
	case f.noCache:
		return w.answer("etcd", w.rev, st.Limit)
	case exact && (f.exactFromEtcd || w.ready && rv <= w.cached && rv < w.since):
		return w.answer("etcd", rv, st.Limit)
	case !w.ready && (st.Limit == 0 || f.refuseAllUnready):
		return Answer{Source: "cache", Code: 429}
	case !w.ready && exact:
		return w.answer("etcd", rv, st.Limit)
	case !w.ready:
		return w.answer("etcd", w.rev, st.Limit)
	case st.ResourceVersion == "0" && f.limitAtZero:
		return w.answer("cache", w.cached, st.Limit)
	case st.ResourceVersion == "0":
		return w.answer("cache", w.cached, 0)
	case st.ResourceVersion == "" && w.cached < w.rev && f.noFallback:
		return Answer{Source: "cache", Code: 504}
	case st.ResourceVersion == "" && w.cached < w.rev:
		return w.answer("etcd", w.rev, st.Limit)
	case st.ResourceVersion == "":
		return w.answer("cache", w.cached, st.Limit)
	case rv > w.cached && f.pastCacheFromEtcd:
		return w.answer("etcd", w.rev, st.Limit)
	case rv > w.cached:
		return Answer{Source: "cache", Code: 504}
	case exact:
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
