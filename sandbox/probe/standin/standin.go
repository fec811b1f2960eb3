// Package standin is the local stand-in "internet" of the egress probes:
// HTTP on 80, HTTPS on 443 (a fresh self-signed certificate) and DNS on
// 53 that answers a fixed set of names with its own address and records
// every question it gets; optionally a package index of wheels (index.go).
// mass-probe runs it as `mass-probe standin`.
package standin

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mass-dev/mass/sandbox/egress"
)

// Banner starts every page the stand-in serves.
const Banner = "mass-standin"

// Handler serves "mass-standin host=H path=P" for any path and N bytes
// of 'x' for /bytes/N.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n, ok := strings.CutPrefix(r.URL.Path, "/bytes/"); ok {
			k, err := strconv.ParseInt(n, 10, 64)
			if err != nil || k < 0 || k > 1<<30 {
				http.Error(w, "bad size", http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Length", strconv.FormatInt(k, 10))
			_, _ = io.CopyN(w, zeroX{}, k)
			return
		}
		fmt.Fprintf(w, "%s host=%s path=%s tls=%t\n", Banner, r.Host, r.URL.Path, r.TLS != nil)
	})
}

// byHost sends requests for host to h and the rest to other.
func byHost(host string, h, other http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, _, err := net.SplitHostPort(r.Host)
		if err != nil {
			name = r.Host
		}
		if strings.EqualFold(name, host) {
			h.ServeHTTP(w, r)
			return
		}
		other.ServeHTTP(w, r)
	})
}

type zeroX struct{}

func (zeroX) Read(b []byte) (int, error) {
	for i := range b {
		b[i] = 'x'
	}
	return len(b), nil
}

// selfSigned makes a throw-away certificate for names.
func selfSigned(names []string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: Banner},
		DNSNames: names, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// Serve runs the stand-in until a listener fails; every DNS question is
// written to rec. With indexDir, it also answers IndexName and serves the
// wheels there as a package index (Index) under that name.
func Serve(names []string, indexDir string, rec *egress.Recorder, log *slog.Logger) error {
	handler := Handler()
	if indexDir != "" {
		ix, err := NewIndex(indexDir)
		if err != nil {
			return err
		}
		names = append(names, IndexName)
		handler = byHost(IndexName, ix, handler)
	}
	dns, err := egress.New(egress.Config{Allow: names, Recorder: rec, Logger: log})
	if err != nil {
		return err
	}
	cert, err := selfSigned(names)
	if err != nil {
		return err
	}
	udp, err := net.ListenPacket("udp", ":53")
	if err != nil {
		return err
	}
	h80, err := net.Listen("tcp", ":80")
	if err != nil {
		return err
	}
	h443, err := tls.Listen("tcp", ":443", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		return err
	}
	errs := make(chan error, 3)
	go func() { errs <- dns.ServeDNS(udp) }()
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go func() { errs <- srv.Serve(h80) }()
	go func() { errs <- srv.Serve(h443) }()
	log.Info("standin ready", "names", names)
	return <-errs
}
