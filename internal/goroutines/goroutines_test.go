package goroutines

import (
	"context"
	"runtime/pprof"
	"strings"
	"testing"
)

// A goroutine parked in a select is found in the dump by the goroutine
// that started it, in state "select".
func TestParkedGoroutineIsFound(t *testing.T) {
	parent := make(chan string)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		parent <- Current()
		go func() {
			select {
			case <-stop:
			case <-make(chan int):
			}
		}()
	}()
	creator := "in goroutine " + <-parent + "\n"
	for range 1000 {
		for _, g := range All() {
			if strings.Contains(g+"\n", creator) && State(g) == "select" {
				return
			}
		}
	}
	t.Fatalf("no goroutine created %s parked in select:\n%s", strings.TrimSpace(creator), Dump())
}

func TestState(t *testing.T) {
	for in, want := range map[string]string{
		"goroutine 42 [select, 2 minutes]:\nmain.f()": "select",
		"goroutine 7 [running]:\nmain.g()":            "running",
		"goroutine 9 [chan receive (nil chan)]:":      "chan receive (nil chan)",
	} {
		if got := State(in); got != want {
			t.Errorf("State(%q) = %q, want %q", in, got, want)
		}
	}
}

// A label set where a goroutine is started marks the goroutines it
// starts in turn, and the dump shows it, with the state still readable.
func TestLabelIsInherited(t *testing.T) {
	ShowLabels()
	stop := make(chan struct{})
	defer close(stop)
	started := make(chan struct{})
	pprof.Do(context.Background(), pprof.Labels("cachelab.test", `a "quoted", value`), func(context.Context) {
		go func() {
			go func() { <-stop }()
			close(started)
			<-stop
		}()
	})
	<-started
	for range 1000 {
		n := 0
		for _, g := range All() {
			if Label(g, "cachelab.test") == `a "quoted", value` && Parked(State(g)) && State(g) == "chan receive" {
				n++
			}
		}
		if n == 2 {
			return
		}
	}
	t.Fatalf("not two labelled goroutines parked in chan receive:\n%s", Dump())
}

func TestLabel(t *testing.T) {
	g := "goroutine 9 [select, 3 minutes labels:{\"a\": \"1\", \"cachelab.side\": \"s\\\"2\"}]:\nmain.f()"
	if got := Label(g, "cachelab.side"); got != "s\"2" {
		t.Errorf("Label = %q", got)
	}
	if got := Label(g, "b"); got != "" {
		t.Errorf("Label of a missing key = %q", got)
	}
	if got := State(g); got != "select" {
		t.Errorf("State = %q", got)
	}
}

// A goroutine reads its own label, inherited from the one that started
// it; one started without the label has none.
func TestOwnLabel(t *testing.T) {
	got := make(chan string, 2)
	pprof.Do(context.Background(), pprof.Labels("cachelab.test", "s7"), func(context.Context) {
		go func() { got <- OwnLabel("cachelab.test") }()
	})
	go func() { got <- OwnLabel("cachelab.test") }()
	a, b := <-got, <-got
	if a > b {
		a, b = b, a
	}
	if a != "" || b != "s7" {
		t.Errorf("labels %q and %q, want \"\" and \"s7\"", a, b)
	}
}
