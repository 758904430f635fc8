// Package testca makes, for tests, a certificate authority and the
// certificates it signs: a server certificate for 127.0.0.1 and a client
// certificate for mutual TLS, written as PEM files in a temporary
// directory. Keys are ECDSA P-256 (fast to generate on a loaded machine).
// Not for production use.
package testca

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is an authority and what it signed. Files are PEM.
type CA struct {
	CAFile                        string // the authority's certificate
	ServerCertFile, ServerKeyFile string // for 127.0.0.1 and localhost
	ClientCertFile, ClientKeyFile string // CN "zerostat-test-client"
	OtherCAFile                   string // an authority that signed none of them
	Pool                          *x509.CertPool
	ServerCert                    tls.Certificate
	caCert                        *x509.Certificate
	caKey                         *ecdsa.PrivateKey
	dir                           string
	serial                        int64
	notBefore, notAfter           time.Time
}

// ClientCN is the common name of the client certificate.
const ClientCN = "zerostat-test-client"

// New makes an authority and its certificates in t.TempDir().
func New(t testing.TB) *CA {
	t.Helper()
	c := &CA{dir: t.TempDir(), notBefore: time.Now().Add(-time.Hour), notAfter: time.Now().Add(24 * time.Hour)}
	var err error
	if c.caKey, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber: c.next(), Subject: pkix.Name{CommonName: "zerostat test CA"},
		NotBefore: c.notBefore, NotAfter: c.notAfter, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &c.caKey.PublicKey, c.caKey)
	if err != nil {
		t.Fatal(err)
	}
	if c.caCert, err = x509.ParseCertificate(der); err != nil {
		t.Fatal(err)
	}
	c.Pool = x509.NewCertPool()
	c.Pool.AddCert(c.caCert)
	c.CAFile = c.write(t, "ca.pem", pemBlock("CERTIFICATE", der))

	certPEM, keyPEM := c.sign(t, &x509.Certificate{
		Subject: pkix.Name{CommonName: "127.0.0.1"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	c.ServerCertFile, c.ServerKeyFile = c.write(t, "server.pem", certPEM), c.write(t, "server-key.pem", keyPEM)
	if c.ServerCert, err = tls.X509KeyPair(certPEM, keyPEM); err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM = c.sign(t, &x509.Certificate{
		Subject: pkix.Name{CommonName: ClientCN}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	c.ClientCertFile, c.ClientKeyFile = c.write(t, "client.pem", certPEM), c.write(t, "client-key.pem", keyPEM)

	otherKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	otherTmpl := &x509.Certificate{SerialNumber: c.next(), Subject: pkix.Name{CommonName: "another CA"},
		NotBefore: c.notBefore, NotAfter: c.notAfter, IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err = x509.CreateCertificate(rand.Reader, otherTmpl, otherTmpl, &otherKey.PublicKey, otherKey)
	if err != nil {
		t.Fatal(err)
	}
	c.OtherCAFile = c.write(t, "other-ca.pem", pemBlock("CERTIFICATE", der))
	return c
}

// ServerTLS returns a server configuration with the server certificate;
// with requireClient, it requires a client certificate the authority
// signed.
func (c *CA) ServerTLS(requireClient bool) *tls.Config {
	cfg := &tls.Config{Certificates: []tls.Certificate{c.ServerCert}, MinVersion: tls.VersionTLS12}
	if requireClient {
		cfg.ClientAuth, cfg.ClientCAs = tls.RequireAndVerifyClientCert, c.Pool
	}
	return cfg
}

func (c *CA) next() *big.Int { c.serial++; return big.NewInt(c.serial) }

func (c *CA) sign(t testing.TB, tmpl *x509.Certificate) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl.SerialNumber, tmpl.NotBefore, tmpl.NotAfter = c.next(), c.notBefore, c.notAfter
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.caCert, &key.PublicKey, c.caKey)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pemBlock("CERTIFICATE", der), pemBlock("PRIVATE KEY", kder)
}

func (c *CA) write(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(c.dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
