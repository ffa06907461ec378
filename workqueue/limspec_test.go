package workqueue_test

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/time/rate"
	cgwq "k8s.io/client-go/util/workqueue"

	"github.com/cachelab/cachelab/workqueue"
)

// limSpec describes a rate limiter, so that each side can build its own.
type limSpec struct {
	kind      string // exp, fastslow, bucket, maxof, maxwait, default
	base, max time.Duration
	maxFast   int
	qps       float64
	burst     int
	kids      []limSpec
}

func expo(base, max time.Duration) limSpec { return limSpec{kind: "exp", base: base, max: max} }
func fastSlow(fast, slow time.Duration, n int) limSpec {
	return limSpec{kind: "fastslow", base: fast, max: slow, maxFast: n}
}
func bucket(qps float64, burst int) limSpec { return limSpec{kind: "bucket", qps: qps, burst: burst} }
func maxOf(kids ...limSpec) limSpec         { return limSpec{kind: "maxof", kids: kids} }
func maxWait(kid limSpec, max time.Duration) limSpec {
	return limSpec{kind: "maxwait", max: max, kids: []limSpec{kid}}
}
func defaultLimiter() limSpec { return limSpec{kind: "default"} }

func (s limSpec) String() string {
	switch s.kind {
	case "exp":
		return fmt.Sprintf("exp(%s,%s)", s.base, s.max)
	case "fastslow":
		return fmt.Sprintf("fastslow(%s,%s,%d)", s.base, s.max, s.maxFast)
	case "bucket":
		return fmt.Sprintf("bucket(%g,%d)", s.qps, s.burst)
	case "maxwait":
		return fmt.Sprintf("maxwait(%s,%s)", s.kids[0], s.max)
	case "maxof":
		var ks []string
		for _, k := range s.kids {
			ks = append(ks, k.String())
		}
		return "maxof(" + strings.Join(ks, ",") + ")"
	}
	return s.kind
}

func (s limSpec) cachelab() workqueue.RateLimiter[string] {
	switch s.kind {
	case "exp":
		return workqueue.NewItemExponentialFailureRateLimiter[string](s.base, s.max)
	case "fastslow":
		return workqueue.NewItemFastSlowRateLimiter[string](s.base, s.max, s.maxFast)
	case "bucket":
		return workqueue.NewBucketRateLimiter[string](workqueue.BucketOptions{QPS: s.qps, Burst: s.burst})
	case "maxwait":
		return workqueue.NewWithMaxWaitRateLimiter(s.kids[0].cachelab(), s.max)
	case "maxof":
		var ls []workqueue.RateLimiter[string]
		for _, k := range s.kids {
			ls = append(ls, k.cachelab())
		}
		return workqueue.NewMaxOfRateLimiter(ls...)
	}
	return workqueue.DefaultControllerRateLimiter[string]()
}

func (s limSpec) clientgo() cgwq.TypedRateLimiter[string] {
	switch s.kind {
	case "exp":
		return cgwq.NewTypedItemExponentialFailureRateLimiter[string](s.base, s.max)
	case "fastslow":
		return cgwq.NewTypedItemFastSlowRateLimiter[string](s.base, s.max, s.maxFast)
	case "bucket":
		return &cgwq.TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(rate.Limit(s.qps), s.burst)}
	case "maxwait":
		return cgwq.NewTypedWithMaxWaitRateLimiter(s.kids[0].clientgo(), s.max)
	case "maxof":
		var ls []cgwq.TypedRateLimiter[string]
		for _, k := range s.kids {
			ls = append(ls, k.clientgo())
		}
		return cgwq.NewTypedMaxOfRateLimiter(ls...)
	}
	return cgwq.DefaultTypedControllerRateLimiter[string]()
}

// limOp is one step of a limiter script: When (n times), Forget,
// NumRequeues, or moving time on.
type limOp struct {
	name string // when, forget, requeues, wait
	item string
	n    int
	d    time.Duration
}

func when(x string, n int) limOp { return limOp{name: "when", item: x, n: n} }
func forgetL(x string) limOp     { return limOp{name: "forget", item: x} }
func requeuesL(x string) limOp   { return limOp{name: "requeues", item: x} }
func wait(d time.Duration) limOp { return limOp{name: "wait", d: d} }

// doLim runs o on l and returns what it saw.
func doLim(l interface {
	When(string) time.Duration
	Forget(string)
	NumRequeues(string) int
}, o limOp) string {
	switch o.name {
	case "when":
		var ds []string
		for range o.n {
			ds = append(ds, l.When(o.item).String())
		}
		return fmt.Sprintf("when %s: %s", o.item, strings.Join(ds, " "))
	case "forget":
		l.Forget(o.item)
		return "forget " + o.item
	case "requeues":
		return fmt.Sprintf("requeues %s = %d", o.item, l.NumRequeues(o.item))
	}
	return "wait " + o.d.String()
}

// runLimiter runs ops against both sides' limiters built from spec, in a
// synctest bubble (so that the buckets' time.Now is the bubble's, moved
// only by wait), and fails at the first difference.
func runLimiter(t *testing.T, spec limSpec, ops []limOp) (transcript []string) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		ours, theirs := spec.cachelab(), spec.clientgo()
		for i, o := range ops {
			if o.name == "wait" {
				advance(o.d)
			}
			a, b := doLim(ours, o), doLim(theirs, o)
			if d := cmp.Diff(b, a); d != "" {
				t.Fatalf("%s, step %d: cachelab and client-go differ (-client-go +cachelab):\n%s", spec, i, d)
			}
			transcript = append(transcript, a)
		}
	})
	return transcript
}

type limCase struct {
	name   string
	covers string
	spec   limSpec
	ops    []limOp
	want   []string
}

func runLimiters(t *testing.T, cases []limCase) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkTranscript(t, c.want, runLimiter(t, c.spec, c.ops))
		})
	}
}
