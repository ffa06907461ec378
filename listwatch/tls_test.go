package listwatch_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cachelab/cachelab/listwatch"
)

// writeCerts makes a CA and a certificate for 127.0.0.1, good for both
// server and client authentication, as PEM files in dir.
func writeCerts(t testing.TB, dir string) listwatch.TLSFiles {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cachelab test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "etcd"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	files := listwatch.TLSFiles{
		CAFile: filepath.Join(dir, "ca.pem"), CertFile: filepath.Join(dir, "cert.pem"), KeyFile: filepath.Join(dir, "key.pem"),
	}
	for path, block := range map[string]*pem.Block{
		files.CAFile:   {Type: "CERTIFICATE", Bytes: caDER},
		files.CertFile: {Type: "CERTIFICATE", Bytes: der},
		files.KeyFile:  {Type: "EC PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// The Writer and ListerWatcher work against an etcd reached only by its
// endpoints, over TLS with client certificates, as against a real cluster.
func TestExternalEtcdWithTLS(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	files := writeCerts(t, t.TempDir())
	server, err := listwatch.StartEmbedded(ctx, listwatch.EmbeddedOptions{Dir: t.TempDir(), TLS: files})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = server.Close() })
	if got := server.Endpoints()[0]; got[:8] != "https://" {
		t.Fatalf("endpoint %s is not https", got)
	}

	client, err := listwatch.Connect(ctx, listwatch.ClientOptions{Endpoints: server.Endpoints(), TLS: files})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	w := listwatch.NewWriter(client, listwatch.Pods, listwatch.WriterOptions{})
	lw := listwatch.NewListerWatcher(client, listwatch.Pods, listwatch.Options{})
	created, err := w.Create(ctx, pod("a/x"))
	if err != nil {
		t.Fatal(err)
	}
	watcher, err := lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: created.GetResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Stop()
	y, err := w.Create(ctx, pod("a/y"))
	if err != nil {
		t.Fatal(err)
	}
	if e := describe(next(t, watcher)); e != "ADDED a/y@"+y.GetResourceVersion() {
		t.Errorf("watch over TLS: %s", e)
	}
	list, err := lw.ListWithContext(ctx, metav1.ListOptions{})
	if err != nil || list == nil {
		t.Fatalf("list over TLS: %v", err)
	}

	noCert, cancelNoCert := context.WithTimeout(ctx, 3*time.Second)
	defer cancelNoCert()
	if c, err := listwatch.Connect(noCert, listwatch.ClientOptions{Endpoints: server.Endpoints(),
		TLS: listwatch.TLSFiles{CAFile: files.CAFile}}); err == nil {
		c.Close()
		t.Error("a client without a certificate was let in")
	}
	if _, err := listwatch.Connect(ctx, listwatch.ClientOptions{}); err == nil {
		t.Error("Connect with no endpoints did not fail")
	}
}
