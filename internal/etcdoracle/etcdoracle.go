// Package etcdoracle is what the differential tests need to put
// kube-apiserver's own storage (k8s.io/apiserver's etcd3 store, its
// generic registry, apiextensions-apiserver's custom resource storage)
// over an embedded etcd of package listwatch's: an etcd for one test, and
// the storage configuration that reaches it. Only tests import it.
package etcdoracle

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apiserver/pkg/storage/storagebackend"

	"github.com/cachelab/cachelab/internal/testdeadline"
	"github.com/cachelab/cachelab/listwatch"
)

// Start starts an embedded etcd for one test, on loopback ports the
// kernel picks, in the test's temporary directory; it stops when the
// test ends. Only the test binary's deadline bounds the start (package
// testdeadline): how long it takes grows with the machine's load.
func Start(t testing.TB) *listwatch.Embedded {
	t.Helper()
	e, err := listwatch.StartEmbedded(testdeadline.Context(t), listwatch.EmbeddedOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// Config is kube-apiserver's storage configuration for e's etcd, its
// keys under prefix, decoding unstructured objects. The storage factory
// takes TLS files only: e's client certificate is written to the test's
// temporary directory. Compaction is off: a test compacts by hand, if at
// all.
func Config(t testing.TB, e *listwatch.Embedded, prefix string) *storagebackend.Config {
	t.Helper()
	cfg := storagebackend.NewDefaultConfig(prefix, unstructured.UnstructuredJSONScheme)
	files, err := e.ClientFiles(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Transport.ServerList = e.Endpoints()
	cfg.Transport.TrustedCAFile, cfg.Transport.CertFile, cfg.Transport.KeyFile = files.CAFile, files.CertFile, files.KeyFile
	cfg.CompactionInterval = 0
	return cfg
}
