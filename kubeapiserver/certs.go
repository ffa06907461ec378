package kubeapiserver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"sync"
	"time"
)

// pki is what one server's run of TLS needs, made fresh for each server
// and kept only in memory: a CA, the serving certificate it signs for
// 127.0.0.1 and localhost, and client certificates for users in the
// group kube-apiserver grants everything (system:masters), as the
// admin credentials of a local test cluster are. Client certificates
// are made per user name, on demand.
type pki struct {
	caPEM                  []byte
	ca                     *x509.Certificate
	caKey                  *ecdsa.PrivateKey
	servingPEM, servingKey []byte
	now                    time.Time

	mu      sync.Mutex
	clients map[string][2][]byte // user: certificate and key
}

// Group is the group every client certificate puts its user in:
// kube-apiserver's privileged group, whose members may do anything.
// User is the user the server's own checks use.
const (
	Group = "system:masters"
	User  = "kube-apiserver-check"
)

func newPKI(now time.Time) (*pki, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "cachelab-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, ca, err := sign(caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	p := &pki{caPEM: pemBlock("CERTIFICATE", caDER), ca: ca, caKey: caKey, now: now, clients: map[string][2][]byte{}}
	p.servingPEM, p.servingKey, err = leaf(ca, caKey, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, now)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// client is user's certificate and key, made at the first call.
func (p *pki) client(user string) (cert, key []byte, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.clients[user]; ok {
		return c[0], c[1], nil
	}
	cert, key, err = leaf(p.ca, p.caKey, &x509.Certificate{
		Subject:     pkix.Name{CommonName: user, Organization: []string{Group}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, p.now)
	if err != nil {
		return nil, nil, err
	}
	p.clients[user] = [2][]byte{cert, key}
	return cert, key, nil
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// leaf makes a key and a certificate for it from tmpl, signed by the CA.
func leaf(ca *x509.Certificate, caKey *ecdsa.PrivateKey, tmpl *x509.Certificate, now time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl.NotBefore, tmpl.NotAfter = now.Add(-time.Hour), now.Add(24*time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, _, err := sign(tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pemBlock("CERTIFICATE", der), pemBlock("EC PRIVATE KEY", keyDER), nil
}

func sign(tmpl, parent *x509.Certificate, pub *ecdsa.PublicKey, by *ecdsa.PrivateKey) ([]byte, *x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, nil, err
	}
	tmpl.SerialNumber = serial
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, by)
	if err != nil {
		return nil, nil, fmt.Errorf("kubeapiserver: making a certificate for %q: %w", tmpl.Subject.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	return der, cert, err
}

func pemBlock(kind string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
}
