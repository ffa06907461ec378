package difftest

import (
	"os/exec"
	"strings"
	"testing"
)

// The from-scratch packages build their own tools/cache: outside their
// tests they must not import client-go or kube-apiserver, directly or
// through another package.
func TestFromScratchPackagesDoNotImportClientGo(t *testing.T) {
	scratch := []string{"store", "heap", "fifo", "deltafifo", "reflector", "informer", "metrics", "listwatch", "workqueue", "controller", "wire", "synctrack", "consistencydetector"}
	args := []string{"list", "-deps", "-f", "{{.ImportPath}}"}
	for _, p := range scratch {
		args = append(args, "github.com/cachelab/cachelab/"+p)
	}
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "k8s.io/client-go") || strings.HasPrefix(dep, "k8s.io/apiserver") {
			t.Errorf("a from-scratch package depends on %s (go list -deps %s)", dep, strings.Join(scratch, " "))
		}
	}
}
