package workqueue_test

import (
	"math"
	"testing"
	"time"
)

// decoder turns fuzz input into scripts; past the end it reads zeros.
type decoder struct{ data []byte }

func (d *decoder) next() int {
	if len(d.data) == 0 {
		return 0
	}
	b := d.data[0]
	d.data = d.data[1:]
	return int(b)
}

func (d *decoder) more() bool { return len(d.data) > 0 }

func pick[E any](d *decoder, from []E) E { return from[d.next()%len(from)] }

var (
	fuzzItems = []string{"a", "b", "c", "d"}
	// Durations with ties and off-by-one neighbours.
	fuzzDelays = []time.Duration{0, 1, ms, 5 * ms, 10 * ms, 10*ms - 1, s, -s, 3 * s}
	fuzzBases  = []time.Duration{1, 3, ms, 5 * ms, s}
	fuzzMaxes  = []time.Duration{0, 10 * ms, time.Hour, 1000 * s, math.MaxInt64}
	fuzzQPS    = []float64{0, 0.5, 1, 3, 10, 1e9, math.MaxFloat64}
	fuzzBursts = []int{0, 1, 2, 5, 100}
)

// limiter reads a limiter description, nesting at most depth deep.
func (d *decoder) limiter(depth int) limSpec {
	k := d.next() % 6
	if depth == 0 && k >= 3 {
		k %= 3
	}
	switch k {
	case 0:
		return expo(pick(d, fuzzBases), pick(d, fuzzMaxes))
	case 1:
		return fastSlow(pick(d, fuzzBases), pick(d, fuzzMaxes), d.next()%4)
	case 2:
		return bucket(pick(d, fuzzQPS), pick(d, fuzzBursts))
	case 3:
		kids := make([]limSpec, d.next()%4)
		for i := range kids {
			kids[i] = d.limiter(depth - 1)
		}
		return maxOf(kids...)
	case 4:
		return maxWait(d.limiter(depth-1), pick(d, fuzzMaxes))
	}
	return defaultLimiter()
}

// queueOp reads one queue operation; four workers share the queue.
func (d *decoder) queueOp() op {
	x, w := pick(d, fuzzItems), d.next()%4+1
	switch d.next() % 16 {
	case 0, 1:
		return add(x)
	case 2, 3:
		return after(x, pick(d, fuzzDelays))
	case 4, 5:
		return limited(x)
	case 6:
		return forget(x)
	case 7:
		return requeues(x)
	case 8:
		return length()
	case 9, 10:
		return get(w)
	case 11, 12:
		return done(w)
	case 13:
		return step(pick(d, fuzzDelays))
	case 14:
		if d.next()%4 == 0 {
			return doneItem(x)
		}
		return shuttingDown()
	}
	if d.next()%2 == 0 {
		return drain()
	}
	return shutDown()
}

func (d *decoder) limOp() limOp {
	x := pick(d, fuzzItems)
	switch d.next() % 6 {
	case 0, 1:
		return when(x, d.next()%8+1)
	case 2:
		return when(x, 64)
	case 3:
		return forgetL(x)
	case 4:
		return requeuesL(x)
	}
	return wait(pick(d, fuzzDelays))
}

var queueSeeds = [][]byte{
	{},
	{0, 0, 9, 0, 0, 0, 0, 0, 1, 0, 1, 9, 0, 1, 11, 0, 1, 11},
	{1, 0, 2, 5, 1, 1, 2, 5, 2, 0, 2, 5, 0, 0, 13, 6, 0, 0, 9, 0, 1, 9, 0, 2, 9},
	{2, 4, 0, 4, 0, 0, 4, 0, 0, 4, 0, 0, 13, 2, 0, 0, 8, 0, 0, 9, 0, 0, 7},
	{2, 0, 1, 0, 0, 0, 0, 9, 0, 0, 0, 15, 1, 0, 0, 11, 0, 0, 15, 0, 0, 0, 11},
}

// FuzzQueue runs random scripts (adds, delayed and rate-limited adds,
// clock steps, four workers getting and finishing items, shutdowns and
// drains) against a random one of the three queues, with a random
// limiter, on both sides, comparing every step as the scripts do.
func FuzzQueue(f *testing.F) {
	for _, seed := range queueSeeds {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := &decoder{data}
		k := []kind{plain, delayingKind, rateLimitingKind}[d.next()%3]
		lim := d.limiter(2)
		var ops []op
		for d.more() && len(ops) < 64 {
			ops = append(ops, d.queueOp())
		}
		runScript(t, k, &lim, ops, false)
	})
}

// FuzzRateLimiter runs random When, Forget, NumRequeues and waits against
// a random limiter, nested up to two deep, on both sides.
func FuzzRateLimiter(f *testing.F) {
	for _, seed := range [][]byte{{}, {0, 0, 0, 0, 0, 5, 2}, {3, 3, 0, 1, 2, 2, 5, 4, 0, 0, 5, 1}, {5, 0, 0, 7, 1, 2, 0, 5, 6}} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := &decoder{data}
		spec := d.limiter(2)
		var ops []limOp
		for d.more() && len(ops) < 64 {
			ops = append(ops, d.limOp())
		}
		runLimiter(t, spec, ops)
	})
}
