package controllertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A controller's process that ends early is a failed settle that says
// how it ended and what it said last; the directory of its kubeconfig
// goes with it.
func TestCommandThatEnds(t *testing.T) {
	w, err := Start(context.Background(), Options{Resources: []string{"configmaps"}, Outside: &Outside{}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close() // it says the controller ended, as Settle did
	w.Run(func(ctx context.Context) error {
		return Command([]string{"sh", "-c", "echo the kubeconfig is $KUBECONFIG; exit 3"}, CommandOptions{})(ctx, w)
	})
	err = w.Settle(context.Background())
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "the kubeconfig is ") {
		t.Fatalf("Settle = %v, want the controller's end, exit status 3, with its last words", err)
	}
	_, kubeconfig, _ := strings.Cut(err.Error(), "the kubeconfig is ")
	if _, err := os.Stat(strings.TrimSpace(kubeconfig)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the controller's kubeconfig %s is still there (%v)", kubeconfig, err)
	}
}

// Close ends the controller's whole process group, and removes its
// kubeconfig.
func TestCommandCleansUp(t *testing.T) {
	w := start(t, Options{Resources: []string{"configmaps"}, Outside: &Outside{}})
	said := filepath.Join(t.TempDir(), "said")
	sh := Command([]string{"sh", "-c", `sleep 1000 & echo $$ $KUBECONFIG > ` + said + `.tmp && mv ` + said + `.tmp ` + said + `; wait`}, CommandOptions{})
	w.Run(func(ctx context.Context) error { return sh(ctx, w) })
	var pgid int
	var kubeconfig string
	for deadline := time.Now().Add(10 * time.Second); ; {
		if b, err := os.ReadFile(said); err == nil {
			f := strings.Fields(string(b))
			kubeconfig = f[1]
			if _, err := fmt.Sscan(f[0], &pgid); err != nil {
				t.Fatal(err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the controller's process did not start within 10 s")
		}
		<-time.After(10 * time.Millisecond) // polling for the file: nothing else says it is there
	}
	if !groupLeft(pgid) {
		t.Fatalf("the controller's process group %d is not there", pgid)
	}
	w.Close()
	if groupLeft(pgid) {
		t.Errorf("after Close, a process of the controller's group %d is left", pgid)
	}
	if _, err := os.Stat(kubeconfig); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after Close, the controller's kubeconfig %s: %v, want it removed", kubeconfig, err)
	}
}
