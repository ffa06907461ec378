package listwatch

import (
	"context"
	"crypto/tls"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/cachelab/cachelab/internal/localca"
	"github.com/cachelab/cachelab/internal/testdeadline"
)

// The embedded etcd lets in only the run's own clients (issue 47, case
// 9): any user of the machine can reach loopback, and over plain gRPC
// could read and write the run's keys under kube-apiserver's feet, or
// speak raft to its members. Every port of every member, the clients'
// and the peers', refuses a client that speaks plain text; the run's
// own client works.
func TestEmbeddedEtcdRefusesPlainText(t *testing.T) {
	t.Parallel() // it waits on etcd, mostly (main_test.go)
	for _, members := range []int{1, 3} {
		t.Run(fmt.Sprintf("%d members", members), func(t *testing.T) {
			e := startWithClient(t, members)
			for _, m := range e.members {
				refused(t, "plain gRPC to "+m.name+"'s client port", ClientOptions{Endpoints: []string{"http://" + m.clientURL.Host}})
				if body, err := getMembers(testdeadline.Context(t), m.peerURL.Host, "http", nil); err == nil {
					t.Errorf("plain HTTP to %s's peer port: let in, the members listed: %s", m.name, body)
				}
			}
		})
	}
}

// Over TLS, a client without the run's client certificate is refused:
// one with none, and one that shows a certificate another CA signed.
// The members' own certificate opens their peer ports.
func TestEmbeddedEtcdRefusesStrangers(t *testing.T) {
	t.Parallel() // it waits on etcd, mostly (main_test.go)
	other, err := localca.New("a stranger's CA", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	pair, err := other.Issue(pkix.Name{CommonName: "stranger"}, localca.Client)
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := pair.TLS()
	if err != nil {
		t.Fatal(err)
	}
	for _, members := range []int{1, 3} {
		t.Run(fmt.Sprintf("%d members", members), func(t *testing.T) {
			e := startWithClient(t, members)
			roots := e.tls.ca.Pool()
			none := &tls.Config{RootCAs: roots}
			// Shown whatever CAs the server asks for: Go's client would
			// otherwise keep a certificate it sees no use for to itself.
			other := &tls.Config{RootCAs: roots, GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &stranger, nil }}
			member, err := tls.LoadX509KeyPair(e.tls.peer.CertFile, e.tls.peer.KeyFile)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range e.members {
				for what, cfg := range map[string]*tls.Config{"without a certificate": none, "with another CA's certificate": other} {
					refused(t, "TLS "+what+" to "+m.name+"'s client port", ClientOptions{Endpoints: []string{"https://" + m.clientURL.Host}, TLSConfig: cfg})
					if body, err := getMembers(testdeadline.Context(t), m.peerURL.Host, "https", cfg); err == nil {
						t.Errorf("TLS %s to %s's peer port: let in, the members listed: %s", what, m.name, body)
					}
				}
				if _, err := getMembers(testdeadline.Context(t), m.peerURL.Host, "https", &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{member}}); err != nil {
					t.Errorf("a member to %s's peer port: %v", m.name, err)
				}
			}
		})
	}
}

// startWithClient starts an etcd of members, closed when the test ends,
// and checks that the run's own client reads and writes it.
func startWithClient(t *testing.T, members int) *Embedded {
	t.Helper()
	ctx := testdeadline.Context(t)
	e, err := StartEmbedded(ctx, EmbeddedOptions{Members: members, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	if _, err := e.Client().Put(ctx, "/registry/pods/ns0/a", "{}"); err != nil {
		t.Fatalf("the run's own client: %v", err)
	}
	return e
}

// refused checks that Connect with opts fails.
func refused(t *testing.T, what string, opts ClientOptions) {
	t.Helper()
	opts.DialTimeout = 10 * time.Second // a bound for a failure: a refusal comes at once
	c, err := Connect(context.Background(), opts)
	if err == nil {
		c.Close()
		t.Errorf("%s: let in", what)
		return
	}
	t.Logf("%s: %v", what, err)
}

// getMembers asks a member's peer port for the member list, as a peer
// does (raft's messages go to the same port), and returns it. ctx bounds
// the request, not a timeout of the client's own: on a loaded machine a
// member that answers may answer late.
func getMembers(ctx context.Context, addr, scheme string, cfg *tls.Config) (string, error) {
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, (&url.URL{Scheme: scheme, Host: addr, Path: "/members"}).String(), nil)
	if err != nil {
		return "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", resp.Status, b)
	}
	return strings.TrimSpace(string(b)), nil
}

// etcd's own gRPC client, as anyone on the machine would run it, without
// the run's certificate: refused too, and not only by Connect's check.
func TestEmbeddedEtcdRefusesAPlainClient(t *testing.T) {
	t.Parallel() // it waits on etcd, mostly (main_test.go)
	ctx := testdeadline.Context(t)
	e, err := StartEmbedded(ctx, EmbeddedOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	addr := e.members[0].clientURL.Host
	for what, cfg := range map[string]clientv3.Config{
		"plain gRPC":                {Endpoints: []string{"http://" + addr}},
		"TLS without a certificate": {Endpoints: []string{"https://" + addr}, TLS: &tls.Config{InsecureSkipVerify: true}},
	} {
		cfg.Logger = zap.NewNop()
		c, err := clientv3.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		// A refused connection is retried until the deadline: a bound on
		// the wait, not a time the test waits for something to happen.
		rctx, rcancel := context.WithTimeout(ctx, time.Second)
		resp, err := c.Get(rctx, "/registry/", clientv3.WithPrefix())
		rcancel()
		c.Close()
		if err == nil {
			t.Errorf("%s: read %d keys", what, len(resp.Kvs))
		}
	}
}

// etcd's certificates and keys, the files its embed reads, are this
// user's only, in a directory of their own, and go when etcd stops; a
// directory given to it keeps nothing of them.
func TestEmbeddedEtcdKeyFiles(t *testing.T) {
	ctx := testdeadline.Context(t)
	dir := t.TempDir()
	e, err := StartEmbedded(ctx, EmbeddedOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	tlsDir := e.tls.dir
	if fi, err := os.Stat(tlsDir); err != nil || fi.Mode().Perm() != 0o700 || filepath.Dir(tlsDir) != dir {
		t.Errorf("the certificates' directory %s: %v, %v; want 0700, in %s", tlsDir, fi.Mode(), err, dir)
	}
	entries, err := os.ReadDir(tlsDir)
	if err != nil || len(entries) == 0 {
		t.Fatalf("%s: %v, %d files", tlsDir, err, len(entries))
	}
	for _, f := range entries {
		if fi, err := f.Info(); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, %v; want 0600", f.Name(), fi.Mode(), err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tlsDir); !os.IsNotExist(err) {
		t.Errorf("after Close, %s: %v; want it gone", tlsDir, err)
	}
}
