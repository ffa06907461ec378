// Package localca is a certificate authority that lives in memory for one
// run: it signs the serving certificates of the run's servers on
// loopback (its embedded etcd, its kube-apiserver) and the certificates
// of their clients, so that each server speaks TLS and lets in only the
// clients that hold a certificate its CA signed. A user of the same
// machine can reach the ports, but not get past the handshake.
//
//	New ──► CA (key in memory only) ──► Issue(Server) ──► the server's certificate, for 127.0.0.1 and localhost
//	                                 └─► Issue(Client) ──► a client's, named by its subject
//
// Each run makes its own CA, good for a day: nothing it signs is trusted
// by anything outside the run, or after it. The CA's key is never
// written anywhere; a certificate's key is written to a file only where
// a server reads its own from one (etcd: listwatch/etcdtls.go).
package localca

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"
)

// CA is a certificate authority made in memory.
type CA struct {
	cert    *x509.Certificate
	certPEM []byte
	key     *ecdsa.PrivateKey
	now     time.Time
}

// Use says what a certificate is for: a server, a client, or both (a
// member of an etcd cluster is its peers' server and their client).
type Use int

const (
	// Server is a certificate for a server on 127.0.0.1, or localhost.
	Server Use = 1 << iota
	// Client is a certificate a client shows a server that asks for one.
	Client
)

// Pair is a certificate and its private key, PEM-encoded.
type Pair struct {
	Cert, Key []byte
}

// New makes a CA named name, and valid, as what it signs is, from an
// hour before now (clocks differ a little) to a day after it: longer
// than any run.
func New(name string, now time.Time) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("localca: a key for %q: %w", name, err)
	}
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: name},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	ca := &CA{key: key, now: now}
	der, cert, err := ca.sign(tmpl, tmpl, &key.PublicKey)
	if err != nil {
		return nil, err
	}
	ca.cert, ca.certPEM = cert, pemBlock("CERTIFICATE", der)
	return ca, nil
}

// CertPEM is the CA's certificate, PEM-encoded: what a server's clients
// trust, and what a server checks its clients' certificates against.
func (ca *CA) CertPEM() []byte { return ca.certPEM }

// Pool is a pool of one certificate, the CA's.
func (ca *CA) Pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	return pool
}

// Issue makes a key, and a certificate for it that the CA signs, naming
// subject and good for use.
func (ca *CA) Issue(subject pkix.Name, use Use) (Pair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Pair{}, fmt.Errorf("localca: a key for %q: %w", subject.CommonName, err)
	}
	tmpl := &x509.Certificate{Subject: subject, KeyUsage: x509.KeyUsageDigitalSignature}
	if use&Server != 0 {
		tmpl.DNSNames = []string{"localhost"}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
	}
	if use&Client != 0 {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
	}
	der, _, err := ca.sign(tmpl, ca.cert, &key.PublicKey)
	if err != nil {
		return Pair{}, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return Pair{}, fmt.Errorf("localca: the key of %q: %w", subject.CommonName, err)
	}
	return Pair{Cert: pemBlock("CERTIFICATE", der), Key: pemBlock("EC PRIVATE KEY", keyDER)}, nil
}

// TLS is the pair as crypto/tls takes it.
func (p Pair) TLS() (tls.Certificate, error) { return tls.X509KeyPair(p.Cert, p.Key) }

// sign makes tmpl a certificate for pub, signed by parent (the CA's
// certificate, or tmpl itself for the CA), with the CA's validity and a
// random serial number.
func (ca *CA) sign(tmpl, parent *x509.Certificate, pub *ecdsa.PublicKey) ([]byte, *x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, nil, err
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore, tmpl.NotAfter = ca.now.Add(-time.Hour), ca.now.Add(24*time.Hour)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, ca.key)
	if err != nil {
		return nil, nil, fmt.Errorf("localca: a certificate for %q: %w", tmpl.Subject.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	return der, cert, err
}

func pemBlock(kind string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
}
