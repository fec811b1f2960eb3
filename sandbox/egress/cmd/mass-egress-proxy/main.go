// Command mass-egress-proxy is the egress proxy of one episode: HTTP and
// CONNECT on :3128, DNS on :53, records as JSON lines on stdout. massd runs
// it in a container of its own; build it with CGO_ENABLED=0. SIGTERM cuts
// open transfers, records them and exits 0.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mass-dev/mass/sandbox/egress"
)

func main() {
	allow := flag.String("allow", "", "comma-separated allowlist (host names, optional *. prefix)")
	maxBytes := flag.Int64("max-bytes", egress.DefaultMaxBytes, "byte cap of the episode, both directions")
	private := flag.Bool("allow-private", false, "let allowed names resolve to private addresses (local tests only)")
	httpAddr := flag.String("listen", ":"+strconv.Itoa(egress.ProxyPort), "HTTP proxy address")
	dnsAddr := flag.String("dns", ":"+strconv.Itoa(egress.DNSPort), "DNS address (UDP and TCP)")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(log, strings.Split(*allow, ","), *maxBytes, *private, *httpAddr, *dnsAddr); err != nil {
		fmt.Fprintln(os.Stderr, "mass-egress-proxy:", err)
		os.Exit(1)
	}
}

func run(log *slog.Logger, allow []string, maxBytes int64, private bool, httpAddr, dnsAddr string) error {
	rec := egress.NewRecorder(os.Stdout)
	p, err := egress.New(egress.Config{Allow: allow, MaxBytes: maxBytes, AllowPrivate: private, Recorder: rec, Logger: log})
	if err != nil {
		return err
	}
	udp, err := net.ListenPacket("udp", dnsAddr)
	if err != nil {
		return err
	}
	tcp, err := net.Listen("tcp", dnsAddr)
	if err != nil {
		return err
	}
	hl, err := net.Listen("tcp", httpAddr)
	if err != nil {
		return err
	}
	errs := make(chan error, 4)
	// SIGTERM (massd's KillEpisode): cut what is open, record it, exit.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	go func() {
		<-sig
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		errs <- p.Shutdown(ctx)
	}()
	go func() { errs <- p.ServeDNS(udp) }()
	go func() { errs <- p.ServeDNSTCP(tcp) }()
	go func() { errs <- p.Serve(hl) }()
	log.Info("egress proxy ready", "allow", allow, "max_bytes", maxBytes, "http", httpAddr, "dns", dnsAddr)
	return <-errs
}
