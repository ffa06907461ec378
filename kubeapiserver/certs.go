package kubeapiserver

import (
	"crypto/x509/pkix"
	"encoding/base64"
	"sync"
	"time"

	"github.com/cachelab/cachelab/internal/localca"
)

// pki is what one server's run of TLS needs, made fresh for each server
// and kept only in memory (internal/localca): a CA, the serving
// certificate it signs for 127.0.0.1 and localhost, and client
// certificates for users in the group kube-apiserver grants everything
// (system:masters), as the admin credentials of a local test cluster
// are. Client certificates are made per user name, on demand.
type pki struct {
	ca                     *localca.CA
	caPEM                  []byte
	servingPEM, servingKey []byte

	mu      sync.Mutex
	clients map[string]localca.Pair // by user
}

// Group is the group every client certificate puts its user in:
// kube-apiserver's privileged group, whose members may do anything.
// User is the user the server's own checks use.
const (
	Group = "system:masters"
	User  = "kube-apiserver-check"
)

func newPKI(now time.Time) (*pki, error) {
	ca, err := localca.New("cachelab-ca", now)
	if err != nil {
		return nil, err
	}
	serving, err := ca.Issue(pkix.Name{CommonName: "kube-apiserver"}, localca.Server)
	if err != nil {
		return nil, err
	}
	return &pki{ca: ca, caPEM: ca.CertPEM(), servingPEM: serving.Cert, servingKey: serving.Key, clients: map[string]localca.Pair{}}, nil
}

// client is user's certificate and key, made at the first call.
func (p *pki) client(user string) (cert, key []byte, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.clients[user]; ok {
		return c.Cert, c.Key, nil
	}
	c, err := p.ca.Issue(pkix.Name{CommonName: user, Organization: []string{Group}}, localca.Client)
	if err != nil {
		return nil, nil, err
	}
	p.clients[user] = c
	return c.Cert, c.Key, nil
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
