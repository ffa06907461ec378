// Package testcerts writes a throwaway CA and certificate for tests that
// run etcd over TLS on loopback from files, as an etcd of the user's own
// is run (--etcd-cacert, --etcd-cert, --etcd-key). The CA is
// internal/localca's, as the embedded etcd's own.
package testcerts

import (
	"crypto/x509/pkix"
	"os"
	"path/filepath"
	"time"

	"github.com/cachelab/cachelab/internal/localca"
	"github.com/cachelab/cachelab/listwatch"
)

// T is what Write needs of a test: testing.TB, or a testscript script.
type T interface {
	Helper()
	Fatal(args ...any)
}

// Write makes a CA and a certificate for 127.0.0.1, good for both
// server and client authentication, as PEM files in dir (each 0600).
func Write(t T, dir string) listwatch.TLSFiles {
	t.Helper()
	ca, err := localca.New("cachelab test CA", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	pair, err := ca.Issue(pkix.Name{CommonName: "etcd"}, localca.Server|localca.Client)
	if err != nil {
		t.Fatal(err)
	}
	files := listwatch.TLSFiles{
		CAFile: filepath.Join(dir, "ca.pem"), CertFile: filepath.Join(dir, "cert.pem"), KeyFile: filepath.Join(dir, "key.pem"),
	}
	for path, b := range map[string][]byte{files.CAFile: ca.CertPEM(), files.CertFile: pair.Cert, files.KeyFile: pair.Key} {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return files
}
