package foreign

import (
	"os"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
)

func TestMain(m *testing.M) {
	klog.SetLogger(logr.Discard()) // kube-apiserver's logs, one world per placement
	os.Exit(m.Run())
}
