package listwatch

import (
	"crypto/tls"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"

	"github.com/cachelab/cachelab/internal/localca"
)

// How the embedded etcd keeps the machine's other users out. It listens
// on 127.0.0.1 only, but any local user can reach loopback: over plain
// gRPC, anyone could read and write the run's keys under kube-apiserver's
// feet. So every port speaks TLS and asks for a client certificate signed
// by a CA the run makes in memory (internal/localca), as kube-apiserver's
// does:
//
//	localca.New (its key in memory only)
//	  ├─► the server's certificate (127.0.0.1, localhost) ──► files ──► etcd's client port: TLS, ClientCertAuth
//	  ├─► the members' certificate (server and client) ────► files ──► the peer ports: TLS, ClientCertAuth
//	  └─► the clients' certificate ───────────────────────► memory ──► ClientOptions().TLSConfig
//
// etcd's embed takes its own certificates as files only (transport.TLSInfo
// holds paths, and reads them again at every handshake, for rotation):
// they are written, each 0600, into a directory of their own (0700) in
// the data directory, and removed when etcd stops, with it. The CA's key,
// and the clients' keys, are never written: a client dials with a
// tls.Config made in memory (Connect takes one: ClientOptions.TLSConfig).
// A cluster's members dial each other with their certificate from its
// file (etcd's peer transport, too, takes files only).
//
// EmbeddedOptions.TLS stands in for this with files of the caller's own,
// as an etcd of the user's is set up; the peer ports keep the run's CA.

// tlsDirPattern names the directory of etcd's certificate files in the
// data directory, beside etcd's own "member" (the only one it reads) and
// the snapshots.
const tlsDirPattern = "cachelab-tls-"

// etcdTLS is an embedded etcd's TLS: its CA, where its files are, and
// what its clients dial with.
type etcdTLS struct {
	ca     *localca.CA
	dir    string
	client *tls.Config       // nil with EmbeddedOptions.TLS: the caller's files
	server transport.TLSInfo // the client port's
	peer   transport.TLSInfo
}

// newEtcdTLS makes the run's CA and etcd's certificates, and writes those
// etcd reads into a new directory in dir. With files given, the client
// port uses them instead.
func newEtcdTLS(dir string, files TLSFiles) (*etcdTLS, error) {
	ca, err := localca.New("cachelab etcd CA", time.Now())
	if err != nil {
		return nil, fmt.Errorf("listwatch: embedded etcd's CA: %w", err)
	}
	t := &etcdTLS{ca: ca}
	if err := os.MkdirAll(dir, 0o700); err != nil { // as etcd makes it
		return nil, fmt.Errorf("listwatch: embedded etcd's data directory: %w", err)
	}
	if t.dir, err = os.MkdirTemp(dir, tlsDirPattern); err != nil { // 0700
		return nil, fmt.Errorf("listwatch: embedded etcd's certificates: %w", err)
	}
	if err := t.makeFiles(files); err != nil {
		_ = t.remove()
		return nil, fmt.Errorf("listwatch: embedded etcd's certificates: %w", err)
	}
	return t, nil
}

// makeFiles issues etcd's certificates and writes them, and makes the
// clients' tls.Config.
func (t *etcdTLS) makeFiles(files TLSFiles) error {
	caFile, err := t.write("ca.crt", t.ca.CertPEM())
	if err != nil {
		return err
	}
	peer, err := t.issueFiles("peer", localca.Server|localca.Client)
	if err != nil {
		return err
	}
	t.peer = transport.TLSInfo{CertFile: peer.CertFile, KeyFile: peer.KeyFile, TrustedCAFile: caFile, ClientCertAuth: true}
	if !files.empty() {
		t.server = transport.TLSInfo{CertFile: files.CertFile, KeyFile: files.KeyFile, TrustedCAFile: files.CAFile, ClientCertAuth: files.CAFile != ""}
		return nil
	}
	server, err := t.issueFiles("server", localca.Server)
	if err != nil {
		return err
	}
	t.server = transport.TLSInfo{CertFile: server.CertFile, KeyFile: server.KeyFile, TrustedCAFile: caFile, ClientCertAuth: true}
	client, err := t.ca.Issue(pkix.Name{CommonName: "cachelab"}, localca.Client)
	if err != nil {
		return err
	}
	cert, err := client.TLS()
	if err != nil {
		return err
	}
	t.client = &tls.Config{RootCAs: t.ca.Pool(), Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12,
		// Shared by every connection of the run (a Clone keeps it): each
		// after the first resumes the session, and skips the
		// certificates' signatures, and etcd's reading them from their
		// files again.
		ClientSessionCache: tls.NewLRUClientSessionCache(64),
		// P-256 alone for the key exchange, which Go computes in
		// assembly: Go's default offers X25519 with ML-KEM too, a
		// post-quantum share that guards a recorded session against a
		// future computer, which loopback inside one process does not
		// have to fear; it was a third of a handshake's cost.
		CurvePreferences: []tls.CurveID{tls.CurveP256}}
	return nil
}

// issueFiles issues a certificate named name for use, and writes it and
// its key into t's directory.
func (t *etcdTLS) issueFiles(name string, use localca.Use) (TLSFiles, error) {
	pair, err := t.ca.Issue(pkix.Name{CommonName: name}, use)
	if err != nil {
		return TLSFiles{}, err
	}
	certFile, err := t.write(name+".crt", pair.Cert)
	if err != nil {
		return TLSFiles{}, err
	}
	keyFile, err := t.write(name+".key", pair.Key)
	return TLSFiles{CertFile: certFile, KeyFile: keyFile}, err
}

// write writes a file only this user may read, and never over another.
func (t *etcdTLS) write(name string, b []byte) (string, error) {
	path := filepath.Join(t.dir, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	_, err = f.Write(b)
	return path, errors.Join(err, f.Close())
}

// remove removes the files.
func (t *etcdTLS) remove() error {
	if t == nil {
		return nil
	}
	return os.RemoveAll(t.dir)
}

// ClientOptions are what a client needs to reach e: its endpoints, and
// the run's client certificate, in memory (or the files e was started
// with: EmbeddedOptions.TLS), and, for a single member, a dial timeout of
// a minute. Without a certificate its CA signed, e refuses the
// connection in the TLS handshake.
func (e *Embedded) ClientOptions() ClientOptions {
	o := ClientOptions{Endpoints: e.Endpoints(), TLS: e.opts.TLS, crashes: true}
	if e.tls.client != nil {
		o = ClientOptions{Endpoints: e.Endpoints(), TLSConfig: e.tls.client, crashes: true}
	}
	if e.Members() == 1 {
		// A single member is up while e is: a dial's bound only
		// catches a hang. A cluster keeps the 5 s default: it is how a
		// dial gets past a member a scenario has taken down.
		o.DialTimeout = embeddedConnectTimeout
	}
	return o
}

// embeddedConnectTimeout bounds a connection to an embedded etcd that
// has said it is ready: only a hang. DefaultDialTimeout's 5 s, etcdctl's
// for a user's etcd, was missed by a ready embedded etcd's Status call
// on a loaded 2-core CI runner (-race, many etcds at once), and failed a
// run for the machine's load.
const embeddedConnectTimeout = time.Minute

// ownClientOptions are ClientOptions for e's own client, whose first
// connection, a cluster's too, is made once every member is ready.
func (e *Embedded) ownClientOptions() ClientOptions {
	o := e.ClientOptions()
	o.DialTimeout = embeddedConnectTimeout
	return o
}

// ClientFiles writes a client certificate of e's CA, its key and the CA's
// certificate into dir (each 0600), for a client that takes files only
// (etcdctl --cacert --cert --key; kube-apiserver's storage factory), and
// returns their names: with EmbeddedOptions.TLS, those files. The caller
// removes them.
func (e *Embedded) ClientFiles(dir string) (TLSFiles, error) {
	if e.tls.client == nil {
		return e.opts.TLS, nil
	}
	pair, err := e.tls.ca.Issue(pkix.Name{CommonName: "cachelab"}, localca.Client)
	if err != nil {
		return TLSFiles{}, err
	}
	files := TLSFiles{CAFile: filepath.Join(dir, "ca.crt"), CertFile: filepath.Join(dir, "client.crt"), KeyFile: filepath.Join(dir, "client.key")}
	for path, b := range map[string][]byte{files.CAFile: e.tls.ca.CertPEM(), files.CertFile: pair.Cert, files.KeyFile: pair.Key} {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return TLSFiles{}, fmt.Errorf("listwatch: client certificate files: %w", err)
		}
	}
	return files, nil
}
