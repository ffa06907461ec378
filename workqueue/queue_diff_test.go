package workqueue_test

import (
	"testing"
)

// client-go: queue.go Typed.Add, Get (W1)
func TestQueueAddCoalesces(t *testing.T) {
	runScripts(t, []script{{
		name: "adds of a queued item coalesce, and items come out first-in first-out", covers: "W1",
		ops: []op{add("a"), add("b"), add("a"), add("c"), add("b"), length(), get(1), get(2), get(3), length()},
		want: []string{
			"add a",
			"add b",
			"add a",
			"add c",
			"add b",
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
		name: "Get blocks until an Add", covers: "W1",
		ops: []op{get(1), length(), add("a"), length()},
		want: []string{
			"get w1",
			"len → 0",
			"add a",
			"  w1: got a",
			"len → 0",
		},
	}})
}

// client-go: queue.go Typed.Add, Done (W2)
func TestQueueHeldItems(t *testing.T) {
	runScripts(t, []script{{
		name: "an item added while held waits for Done, then goes to the back", covers: "W2 W1",
		ops: []op{add("a"), add("b"), get(1), add("a"), add("a"), length(), get(2), get(3), length(), done(1), length(), done(2)},
		want: []string{
			"add a",
			"add b",
			"get w1",
			"  w1: got a",
			"add a",
			"add a",
			"len → 1",
			"get w2",
			"  w2: got b",
			"get w3",
			"len → 0",
			"done w1",
			"  w3: got a",
			"len → 0",
			"done w2",
		},
	}, {
		name: "an item held is never handed to a second worker", covers: "W2",
		ops: []op{add("a"), get(1), get(2), add("a"), length(), done(1), done(2), get(1)},
		want: []string{
			"add a",
			"get w1",
			"  w1: got a",
			"get w2",
			"add a",
			"len → 0",
			"done w1",
			"  w2: got a",
			"done w2",
			"get w1",
		},
	}, {
		name: "Done of an item not added again leaves nothing queued", covers: "W2",
		ops: []op{add("a"), get(1), done(1), length(), get(1)},
		want: []string{
			"add a",
			"get w1",
			"  w1: got a",
			"done w1",
			"len → 0",
			"get w1",
		},
	}})
}

// client-go: queue.go Typed.ShutDown, Get, Add, Done (W3)
func TestQueueShutDown(t *testing.T) {
	runScripts(t, []script{{
		name: "waiting workers wake with shutdown", covers: "W3",
		ops: []op{get(1), get(2), shuttingDown(), shutDown(), shuttingDown()},
		want: []string{
			"get w1",
			"get w2",
			"down? → false",
			"down",
			"  w1: shutdown",
			"  w2: shutdown",
			"down? → true",
		},
	}, {
		name: "queued items drain first; adds are ignored", covers: "W3",
		ops: []op{add("a"), add("b"), shutDown(), add("c"), length(), get(1), get(2), get(3)},
		want: []string{
			"add a",
			"add b",
			"down",
			"add c",
			"len → 2",
			"get w1",
			"  w1: got a",
			"get w2",
			"  w2: got b",
			"get w3",
			"  w3: shutdown",
		},
	}, {
		name: "an item added while held before shutdown is still requeued by Done", covers: "W3 W2",
		ops: []op{add("a"), get(1), add("a"), shutDown(), add("b"), done(1), length(), get(2), get(3)},
		want: []string{
			"add a",
			"get w1",
			"  w1: got a",
			"add a",
			"down",
			"add b",
			"done w1",
			"len → 1",
			"get w2",
			"  w2: got a",
			"get w3",
			"  w3: shutdown",
		},
	}, {
		name: "an item held at shutdown and added after is not requeued", covers: "W3",
		ops: []op{add("a"), get(1), shutDown(), add("a"), done(1), length(), get(1)},
		want: []string{
			"add a",
			"get w1",
			"  w1: got a",
			"down",
			"add a",
			"done w1",
			"len → 0",
			"get w1",
			"  w1: shutdown",
		},
	}})
}

// client-go: queue.go Typed.Done (W4)
func TestQueueDoneTrustsCaller(t *testing.T) {
	runScripts(t, []script{{
		name: "Done of a queued item never handed out queues it twice", covers: "W4",
		ops: []op{add("a"), doneItem("a"), length(), get(1), get(2), length()},
		want: []string{
			"add a",
			"doneItem a",
			"len → 2",
			"get w1",
			"  w1: got a",
			"get w2",
			"  w2: got a",
			"len → 0",
		},
	}, {
		name: "Done of an unknown item does nothing", covers: "W4",
		ops: []op{doneItem("x"), length(), add("a"), get(1)},
		want: []string{
			"doneItem x",
			"len → 0",
			"add a",
			"get w1",
			"  w1: got a",
		},
	}})
}

// client-go: queue.go Typed.Get, Done and sync.Cond (W5)
func TestQueueWaitingOrder(t *testing.T) {
	runScripts(t, []script{{
		name: "workers waiting in Get are served in the order they began to wait", covers: "W5",
		ops: []op{get(3), get(1), get(2), add("a"), add("b"), add("c"), done(3), done(1), done(2)},
		want: []string{
			"get w3",
			"get w1",
			"get w2",
			"add a",
			"  w3: got a",
			"add b",
			"  w1: got b",
			"add c",
			"  w2: got c",
			"done w3",
			"done w1",
			"done w2",
		},
	}, {
		name: "a Done that leaves nothing held sends the longest waiter to the back", covers: "W5",
		ops: []op{add("x"), get(9), get(1), get(2), done(9), add("a"), add("b")},
		want: []string{
			"add x",
			"get w9",
			"  w9: got x",
			"get w1",
			"get w2",
			"done w9",
			"add a",
			"  w2: got a",
			"add b",
			"  w1: got b",
		},
	}})
}

// client-go: queue.go Typed.ShutDownWithDrain (W6)
func TestQueueShutDownWithDrain(t *testing.T) {
	runScripts(t, []script{{
		name: "drain returns once every held item is done", covers: "W6",
		ops: []op{add("a"), add("b"), get(1), get(2), drain(), done(1), add("c"), get(3), done(2)},
		want: []string{
			"add a",
			"add b",
			"get w1",
			"  w1: got a",
			"get w2",
			"  w2: got b",
			"drain",
			"done w1",
			"add c",
			"get w3",
			"  w3: shutdown",
			"done w2",
			"  drained",
		},
	}, {
		name: "with nothing held, drain returns at once", covers: "W6",
		ops: []op{add("a"), drain(), get(1), done(1)},
		want: []string{
			"add a",
			"drain",
			"  drained",
			"get w1",
			"  w1: got a",
			"done w1",
		},
	}, {
		name: "ShutDown releases a waiting drain", covers: "W6",
		ops: []op{add("a"), get(1), drain(), shutDown(), done(1)},
		want: []string{
			"add a",
			"get w1",
			"  w1: got a",
			"drain",
			"down",
			"  drained",
			"done w1",
		},
	}, {
		name: "an item re-added before drain and requeued by Done is handed out during drain", covers: "W6 W2",
		ops: []op{add("a"), get(1), add("a"), drain(), done(1), get(2), done(2)},
		want: []string{
			"add a",
			"get w1",
			"  w1: got a",
			"add a",
			"drain",
			"done w1",
			"  drained",
			"get w2",
			"  w2: got a",
			"done w2",
		},
	}})
}
