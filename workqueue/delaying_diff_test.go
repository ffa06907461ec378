package workqueue_test

import (
	"testing"
	"time"
)

const (
	ms = time.Millisecond
	s  = time.Second
)

// client-go: delaying_queue.go AddAfter, waitingLoop (W7)
func TestDelayingAddAfter(t *testing.T) {
	runScripts(t, []script{{
		name: "an item waits outside the queue until its time, to the nanosecond", covers: "W7",
		kind: delayingKind,
		ops:  []op{after("a", 50*ms), length(), get(1), step(50*ms - 1), length(), step(1), length()},
		want: []string{
			"after a 50ms",
			"len → 0",
			"get w1",
			"step 49.999999ms",
			"len → 0",
			"step 1ns",
			"  w1: got a",
			"len → 0",
		},
	}, {
		name: "a delay of zero or less is an Add", covers: "W7",
		kind: delayingKind,
		ops:  []op{after("a", 0), after("b", -s), length()},
		want: []string{
			"after a 0s",
			"after b -1s",
			"len → 2",
		},
	}, {
		name: "a step past several due times adds them all, earliest first", covers: "W7 W8",
		kind: delayingKind,
		ops:  []op{after("c", 3*s), after("a", 1*s), after("b", 2*s), after("d", 9*s), step(5 * s), length(), get(1), get(2), get(3), length()},
		want: []string{
			"after c 3s",
			"after a 1s",
			"after b 2s",
			"after d 9s",
			"step 5s",
			"len → 3",
			"get w1",
			"  w1: got a",
			"get w2",
			"  w2: got b",
			"get w3",
			"  w3: got c",
			"len → 0",
		},
	}, {
		name: "an item already queued that is also delayed is queued once", covers: "W7 W1",
		kind: delayingKind,
		ops:  []op{add("a"), after("a", s), step(s), length(), get(1), step(s), length()},
		want: []string{
			"add a",
			"after a 1s",
			"step 1s",
			"len → 1",
			"get w1",
			"  w1: got a",
			"step 1s",
			"len → 0",
		},
	}, {
		name: "a delayed item that comes due while held waits for Done", covers: "W7 W2",
		kind: delayingKind,
		ops:  []op{add("a"), get(1), after("a", s), step(s), length(), done(1), length()},
		want: []string{
			"add a",
			"get w1",
			"  w1: got a",
			"after a 1s",
			"step 1s",
			"len → 0",
			"done w1",
			"len → 1",
		},
	}})
}

// client-go: delaying_queue.go waitForPriorityQueue (container/heap) (W8)
func TestDelayingTies(t *testing.T) {
	var ties []op
	for _, x := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		ties = append(ties, after(x, s))
	}
	ties = append(ties, step(s))
	for w := range 7 {
		ties = append(ties, get(w+1))
	}
	runScripts(t, []script{{
		name: "items due at the same instant come out in heap order, not in the order added", covers: "W8",
		kind: delayingKind, ops: ties,
		want: []string{
			"after a 1s",
			"after b 1s",
			"after c 1s",
			"after d 1s",
			"after e 1s",
			"after f 1s",
			"after g 1s",
			"step 1s",
			"get w1",
			"  w1: got a",
			"get w2",
			"  w2: got g",
			"get w3",
			"  w3: got f",
			"get w4",
			"  w4: got e",
			"get w5",
			"  w5: got d",
			"get w6",
			"  w6: got c",
			"get w7",
			"  w7: got b",
		},
	}, {
		name: "ties with earlier items between them", covers: "W8",
		kind: delayingKind,
		ops:  []op{after("x", 2*s), after("y", s), after("z", 2*s), after("w", 2*s), step(s), get(1), step(s), get(2), get(3), get(4)},
		want: []string{
			"after x 2s",
			"after y 1s",
			"after z 2s",
			"after w 2s",
			"step 1s",
			"get w1",
			"  w1: got y",
			"step 1s",
			"get w2",
			"  w2: got w",
			"get w3",
			"  w3: got z",
			"get w4",
			"  w4: got x",
		},
	}})
}

// client-go: delaying_queue.go insert (W9)
func TestDelayingReAdd(t *testing.T) {
	runScripts(t, []script{{
		name: "a second AddAfter can bring an item forward", covers: "W9",
		kind: delayingKind,
		ops:  []op{after("a", 10*s), after("a", 2*s), step(2 * s), length(), get(1), step(10 * s), length()},
		want: []string{
			"after a 10s",
			"after a 2s",
			"step 2s",
			"len → 1",
			"get w1",
			"  w1: got a",
			"step 10s",
			"len → 0",
		},
	}, {
		name: "but never push it back", covers: "W9",
		kind: delayingKind,
		ops:  []op{after("a", 2*s), after("a", 10*s), step(2 * s), length(), get(1)},
		want: []string{
			"after a 2s",
			"after a 10s",
			"step 2s",
			"len → 1",
			"get w1",
			"  w1: got a",
		},
	}, {
		name: "an item brought forward overtakes others", covers: "W9 W8",
		kind: delayingKind,
		ops:  []op{after("a", 3*s), after("b", 2*s), after("a", s), step(3 * s), get(1), get(2)},
		want: []string{
			"after a 3s",
			"after b 2s",
			"after a 1s",
			"step 3s",
			"get w1",
			"  w1: got a",
			"get w2",
			"  w2: got b",
		},
	}, {
		name: "once added, an item can wait again", covers: "W9 W7",
		kind: delayingKind,
		ops:  []op{after("a", s), step(s), get(1), after("a", s), done(1), length(), step(s), length()},
		want: []string{
			"after a 1s",
			"step 1s",
			"get w1",
			"  w1: got a",
			"after a 1s",
			"done w1",
			"len → 0",
			"step 1s",
			"len → 1",
		},
	}})
}

// client-go: delaying_queue.go ShutDown, AddAfter, waitingLoop (W10, W11)
func TestDelayingShutDown(t *testing.T) {
	runScripts(t, []script{{
		name: "waiting items are dropped at shutdown", covers: "W10",
		kind: delayingKind,
		ops:  []op{after("a", s), shutDown(), step(s), length(), get(1)},
		want: []string{
			"after a 1s",
			"down",
			"step 1s",
			"len → 0",
			"get w1",
			"  w1: shutdown",
		},
	}, {
		name: "and at ShutDownWithDrain", covers: "W10 W6",
		kind: delayingKind,
		ops:  []op{after("a", s), add("b"), get(1), drain(), step(s), length(), done(1), get(2)},
		want: []string{
			"after a 1s",
			"add b",
			"get w1",
			"  w1: got b",
			"drain",
			"step 1s",
			"len → 0",
			"done w1",
			"  drained",
			"get w2",
			"  w2: shutdown",
		},
	}, {
		name: "AddAfter after shutdown is ignored, even with no delay", covers: "W10 W7",
		kind: delayingKind,
		ops:  []op{shutDown(), after("a", 0), after("b", s), step(s), length()},
		want: []string{
			"down",
			"after a 0s",
			"after b 1s",
			"step 1s",
			"len → 0",
		},
	}, {
		name: "a second ShutDown does not release a drain begun after the first", covers: "W11 W6",
		kind: delayingKind,
		ops:  []op{add("a"), get(1), shutDown(), drain(), shutDown(), done(1)},
		want: []string{
			"add a",
			"get w1",
			"  w1: got a",
			"down",
			"drain",
			"down",
			"done w1",
			"  drained",
		},
	}, {
		name: "a first ShutDown releases a drain", covers: "W11 W6",
		kind: delayingKind,
		ops:  []op{add("a"), get(1), drain(), shutDown(), done(1)},
		want: []string{
			"add a",
			"get w1",
			"  w1: got a",
			"drain",
			"down",
			"  drained",
			"done w1",
		},
	}})
}
