package goroutines

import (
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
