package trace

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Tiny builders for a run's lines, as the simulator records them.
func wrote(op, key, rv, prev string) Event {
	return Event{Layer: LayerEtcd, Kind: KindWrite, Op: op, Key: key, UID: "uid-" + key, RV: rv, PrevRV: prev, Detail: op + " " + key}
}
func lever(op, rv string) Event {
	return Event{Layer: LayerSim, Kind: KindWorld, Op: op, RV: rv, Detail: op}
}
func asked(op, id, rv string) Event {
	return Event{Layer: LayerRequest, Kind: KindRequest, Op: op, Watch: id, RV: rv, Detail: id + " " + op + " rv=" + rv}
}
func delivered(id, op, key, rv string, initial bool) Event {
	return Event{Layer: LayerWatch, Kind: KindEvent, Watch: id, Op: op, Key: key, UID: "uid-" + key, RV: rv, Initial: initial, Detail: op + " " + key + "@" + rv}
}
func watchError(id string, status int) Event {
	return Event{Layer: LayerWatch, Kind: KindEvent, Watch: id, Op: "ERROR", Status: status, Detail: "ERROR 410 Expired: too old"}
}
func listEnd(id, rv string) Event {
	return Event{Layer: LayerWatch, Kind: KindEvent, Watch: id, Op: "BOOKMARK", RV: rv, Detail: "BOOKMARK rv " + rv + InitialEventsEndMark}
}
func indexed(op, key, rv, prev string) Event {
	return Event{Layer: LayerIndexer, Kind: KindStore, Op: op, Key: key, RV: rv, PrevRV: prev, Detail: key}
}
func called(op, key, detail string, order Order) Event {
	return Event{Layer: HandlerLayer("h1"), Kind: KindCall, Handler: "h1", Op: op, Key: key, Detail: detail, Order: order}
}
func synced() Event {
	return Event{Layer: LayerSynced, Kind: KindSynced, Detail: "informer HasSynced=true"}
}

// step is a step whose two sides did the same.
func step(n int, cmd string, world []Event, side ...Event) StepResult {
	return StepResult{Index: n, Cmd: cmd, World: world, Sides: map[string][]Event{Cachelab: side, ClientGo: side}}
}

// storyText is key's story over steps, as --object prints it.
func storyText(h Header, steps []StepResult, key string) string {
	n := NewNarrator(h)
	var told []StoryStep
	for _, sr := range steps {
		if st, ok := StoryOf(sr, n.Step(sr, false), key); ok {
			told = append(told, st)
		}
	}
	var b strings.Builder
	writeStory(&b, key, told)
	return b.String()
}

// started is a default-stack start that lists ns0/a@2 and ns0/b@3 with
// a watch-list (w1).
func started(n int) StepResult {
	return step(n, "start", nil, asked("WATCH-LIST", "w1", ""),
		delivered("w1", "ADDED", "ns0/a", "2", true), delivered("w1", "ADDED", "ns0/b", "3", true), listEnd("w1", "3"),
		indexed("add", "ns0/a", "2", ""), indexed("add", "ns0/b", "3", ""),
		called("OnAdd", "ns0/a", "ns0/a@2 (initial list)", OrderInitialList), called("OnAdd", "ns0/b", "ns0/b@3 (initial list)", OrderInitialList),
		synced())
}

// The story of a delete missed while disconnected (issue 47, case 12):
// the step of the delete says the informer was disconnected, and the
// reconnect's removal and tombstone say which relist made them, after
// what, and why etcd could not replay the delete.
func TestStoryOfAMissedDelete(t *testing.T) {
	steps := []StepResult{
		started(1),
		step(2, "disconnect", []Event{lever(LeverDisconnect, "")}, asked("WATCH", "w2", "3")),
		step(3, "delete ns0/b", []Event{wrote("delete", "ns0/b", "3", "")}),
		step(4, "create ns0/c", []Event{wrote("create", "ns0/c", "5", "")}),
		step(5, "compact", []Event{{Layer: LayerEtcd, Kind: KindWorld, Op: LeverCompact, RV: "5", Detail: "compact"}}),
		step(6, "reconnect", []Event{lever(LeverReconnect, "")},
			asked("WATCH-LIST", "w3", "3"), watchError("w2", 410),
			delivered("w3", "ADDED", "ns0/a", "2", true), delivered("w3", "ADDED", "ns0/c", "5", true), listEnd("w3", "5"),
			indexed("delete", "ns0/b", "", "3"), indexed("add", "ns0/c", "5", ""),
			called("OnDelete", "ns0/b", "DeletedFinalStateUnknown{ns0/b, last seen ns0/b@3}", OrderTombstones),
			called("OnUpdate", "ns0/a", "ns0/a@2 -> ns0/a@2"+SameObjectMark, OrderListed),
			called("OnAdd", "ns0/c", "ns0/c@5", OrderListed)),
	}
	h := Header{Server: "etcd", Stack: "default"}
	want := `
── the story of ns0/b (what each step did to it, from etcd to the handlers)
  step 1: start
    → watch w1 delivered ADDED at rv 3 (one of a watch-list's initial events)
    → added to the indexer at rv 3
    → handler h1: OnAdd ns0/b@3 (initial list)
  step 3: delete ns0/b
      deleted from etcd (it was at rv 3); the informer was disconnected (step 2), so the delete did not reach it
  step 6: reconnect
    → removed from the indexer (it was at rv 3): the relist w3, after the 410 on w2 (w2 asked for rv 3, and etcd had compacted its history before rv 5 at step 5), replaced the store, and ns0/b was not in its list at rv 5
    → handler h1: OnDelete DeletedFinalStateUnknown{ns0/b, last seen ns0/b@3}: a tombstone, as the relist at rv 5 did not list ns0/b (P3)
`
	if d := cmp.Diff(want, storyText(h, steps, "ns0/b")); d != "" {
		t.Errorf("the story of ns0/b (-want +got):\n%s", d)
	}
	for key, sentence := range map[string]string{
		"ns0/a": "handler h1: OnUpdate ns0/a@2 -> ns0/a@2 (same object: a resync or relist): the relist w3, after the 410 on w2 (w2 asked for rv 3, and etcd had compacted its history before rv 5 at step 5), listed it unchanged, in its list at rv 5",
		"ns0/c": "watch w3 delivered ADDED at rv 5 (one of a watch-list's initial events): w3 is the relist, after the 410 on w2",
	} {
		if got := storyText(h, steps, key); !strings.Contains(got, sentence) {
			t.Errorf("the story of %s has no %q:\n%s", key, sentence, got)
		}
	}
	// Behind the watch cache, a 410 comes from the cache's own history
	// (C4): the compaction is not named as its cause.
	if got := storyText(Header{Server: "watchcache"}, steps, "ns0/b"); strings.Contains(got, "compacted") {
		t.Errorf("behind the watch cache, the story names etcd's compaction as the 410's cause:\n%s", got)
	}
}

// Each kind of effect says its cause where the trace has it, and no more
// where it does not.
func TestStoryCauses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []StepResult
		key   string
		want  string // a sentence the story must hold
		never string // words it must not hold
	}{
		{name: "a resync", key: "ns0/a", steps: []StepResult{started(1),
			step(2, "advance 30s", []Event{lever(LeverClock, "")}, called("OnUpdate", "ns0/a", "ns0/a@2 -> ns0/a@2"+SameObjectMark, OrderSameObject))},
			want: "(same object: a resync or relist): a resync: the clock moved and no list was asked for, so the informer sent what it had cached again (P4)"},
		{name: "an unchanged update with no cause in the trace", key: "ns0/a", steps: []StepResult{started(1),
			step(2, "release-handler h1", nil, called("OnUpdate", "ns0/a", "ns0/a@2 -> ns0/a@2"+SameObjectMark, OrderSameObject))},
			want: "OnUpdate ns0/a@2 -> ns0/a@2 (same object: a resync or relist)\n", never: "resync:"},
		{name: "a selector", key: "ns0/a", steps: []StepResult{started(1),
			step(2, "update ns0/a", []Event{wrote("update", "ns0/a", "4", "2")}, delivered("w1", "DELETED", "ns0/a", "4", false))},
			want: "watch w1 delivered DELETED at rv 4: the update at rv 4 took it out of the informer's selector, so the server sent DELETED (E5)"},
		{name: "a held watch cache", key: "ns0/a", steps: []StepResult{started(1),
			step(2, "hold-cache", []Event{lever(LeverHoldCache, "")}),
			step(3, "update ns0/a", []Event{wrote("update", "ns0/a", "4", "2")}),
			step(4, "release-cache", []Event{lever(LeverReleaseCache, "")}, delivered("w1", "MODIFIED", "ns0/a", "4", false))},
			want: "watch w1 delivered MODIFIED at rv 4 (the update of step 3, which waited in the held watch cache until its release in this step)"},
		{name: "a held watch cache, the write", key: "ns0/a", steps: []StepResult{started(1),
			step(2, "hold-cache", []Event{lever(LeverHoldCache, "")}),
			step(3, "update ns0/a", []Event{wrote("update", "ns0/a", "4", "2")})},
			want: "updated in etcd, rv 2 → 4; the watch cache was held (step 2), so the update at rv 4 waits there and did not reach the informer"},
		{name: "disconnected before any informer ran", key: "ns0/a", steps: []StepResult{
			step(1, "disconnect", []Event{lever(LeverDisconnect, "")}),
			step(2, "create ns0/a", []Event{wrote("create", "ns0/a", "2", "")})},
			want: "created in etcd at rv 2\n", never: "disconnected"},
		{name: "a late handler", key: "ns0/a", steps: []StepResult{started(1),
			step(2, "add-handler late", nil, Event{Layer: HandlerLayer("late"), Kind: KindCall, Handler: "late", Op: "OnAdd", Key: "ns0/a", Detail: "ns0/a@2 (initial list)", Order: OrderInitialList})},
			want: "handler late: OnAdd ns0/a@2 (initial list): handler late was added after the informer had synced, so it first gets an OnAdd for each cached object (P8)"},
		{name: "a removal the trace does not explain", key: "ns0/a", steps: []StepResult{started(1),
			step(2, "stop", nil, indexed("delete", "ns0/a", "", "2"))},
			want: "removed from the indexer (it was at rv 2)\n"},
		{name: "a rate-limited requeue", key: "ns0/a", steps: []StepResult{started(1),
			step(2, "start-controller", nil, Event{Layer: LayerWorkqueue, Kind: KindWorkqueue, Op: "forget", Key: "ns0/a", Detail: "ns0/a"}),
			step(3, "update ns0/a", nil, Event{Layer: LayerWorkqueue, Kind: KindWorkqueue, Op: "requeue", Key: "ns0/a", Detail: "ns0/a in 5ms (rate-limited)"}),
			step(4, "advance 5ms", []Event{lever(LeverClock, "")}, Event{Layer: LayerWorkqueue, Kind: KindWorkqueue, Op: "get", Key: "ns0/a", Detail: "ns0/a"},
				Event{Layer: LayerWorkqueue, Kind: KindWorkqueue, Op: "requeue", Key: "ns0/a", Detail: "ns0/a in 10ms (rate-limited)"})},
			want: "workqueue: get ns0/a: its requeue of step 3 came due\n    → workqueue: requeue ns0/a in 10ms (rate-limited): its 2nd rate-limited requeue since its forget at step 2 (K3)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := storyText(Header{Server: "etcd", Stack: "default"}, tc.steps, tc.key)
			if !strings.Contains(got, tc.want) {
				t.Errorf("the story has no %q:\n%s", tc.want, got)
			}
			if tc.never != "" && strings.Contains(got, tc.never) {
				t.Errorf("the story says %q, which the trace does not show:\n%s", tc.never, got)
			}
		})
	}
}
