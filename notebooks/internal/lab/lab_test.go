package lab

import (
	"errors"
	"strings"
	"testing"
)

// A panic is a failed check, not a crash; outside the code under check
// (here, in this package) it names no line of it, only where it was
// raised.
func TestSafelyTurnsAPanicIntoAnError(t *testing.T) {
	err := Safely(func() error { panic("boom") })
	var p *PanicError
	if !errors.As(err, &p) {
		t.Fatalf("Safely returned %v, want a *PanicError", err)
	}
	if p.Value != "boom" || p.At != "" || err.Error() != "your code panicked: boom" {
		t.Errorf("got %#v (%q), want the value boom and no line of the code under check", p, err)
	}
	if got := Safely(func() error { return errors.New("plain") }); got == nil || got.Error() != "plain" {
		t.Errorf("Safely changed a plain error: %v", got)
	}
}

// Names lose their package path and package; places are relative to the
// test's directory.
func TestNamesAndPlaces(t *testing.T) {
	for full, want := range map[string]string{
		"github.com/cachelab/cachelab/notebooks/08-reconcile/exercise.(*Limiter).When":              "(*Limiter).When",
		"github.com/cachelab/cachelab/notebooks/08-reconcile/exercise/solution.ProcessNextWorkItem": "ProcessNextWorkItem",
		"main.main": "main",
	} {
		if got := shortName(full); got != want {
			t.Errorf("shortName(%q) = %q, want %q", full, got, want)
		}
	}
	if got := Func(TestNamesAndPlaces); !strings.HasPrefix(got, "TestNamesAndPlaces (lab_test.go:") {
		t.Errorf("Func = %q, want TestNamesAndPlaces (lab_test.go:N)", got)
	}
	for _, f := range []string{"check.go", "play.go", "play_queue.go", "check_lists.go"} {
		if !checkerFile(f) {
			t.Errorf("%s is not the checker's", f)
		}
	}
	for _, f := range []string{"loop.go", "predict.go", "exercise_test.go"} {
		if checkerFile(f) {
			t.Errorf("%s is the checker's", f)
		}
	}
}
