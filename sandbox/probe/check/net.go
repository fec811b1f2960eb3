package check

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// Egress targets. Only these are ever tried, only after a routing check that
// sends nothing, and only with a short timeout. When a route exists the
// check fails at once without contacting the target; the one exception is
// the Docker gateway, where the runner's own listener stands.
const (
	publicAddr   = "1.1.1.1"
	metadataAWS  = "169.254.169.254"
	metadataAli  = "100.100.100.200"
	metadataGCP  = "metadata.google.internal"
	dialTimeout  = 2 * time.Second
	noEgressWant = "no route; connection fails without sending"
)

func netChecks() []named {
	return []named{
		one("net_loopback_only", checkInterfaces),
		one("net_no_route", checkRoutes),
		one("egress_tcp_public", func(Config) Result { return egressTCP(publicAddr, 443) }),
		one("egress_udp_public", func(Config) Result { return egressUDP(publicAddr, 53, false) }),
		one("dns_resolution", func(Config) Result { return checkDNS("example.com") }),
		one("metadata_169_254_169_254", func(Config) Result { return egressTCP(metadataAWS, 80) }),
		one("metadata_100_100_100_200", func(Config) Result { return egressTCP(metadataAli, 80) }),
		one("metadata_google_internal", func(Config) Result { return checkDNS(metadataGCP) }),
		one("docker_gateway_tcp", checkGatewayTCP),
		one("docker_gateway_udp", func(c Config) Result {
			if c.Gateway == "" || c.GatewayUDP == 0 {
				return fail(noEgressWant, "runner gave no gateway address")
			}
			return egressUDP(c.Gateway, c.GatewayUDP, true)
		}),
	}
}

func checkInterfaces(Config) Result {
	ifs, err := net.Interfaces()
	if err != nil {
		return fail("only lo", "list interfaces: "+err.Error())
	}
	var names []string
	ok := true
	for _, i := range ifs {
		names = append(names, i.Name)
		if i.Flags&net.FlagLoopback == 0 {
			ok = false
		}
	}
	return verdict(ok, "only lo", "interfaces: "+joinSorted(names))
}

func checkRoutes(Config) Result {
	var routes []string
	for _, p := range []string{"/proc/net/route", "/proc/net/ipv6_route"} {
		b, err := readSmall(p, 1<<20)
		if err != nil {
			continue
		}
		for i, l := range strings.Split(b, "\n") {
			f := strings.Fields(l)
			if len(f) == 0 || (p == "/proc/net/route" && i == 0) {
				continue
			}
			iface := f[0]
			if p == "/proc/net/ipv6_route" {
				iface = f[len(f)-1]
			}
			if iface != "lo" {
				routes = append(routes, iface)
			}
		}
	}
	if len(routes) > 0 {
		return fail("no route except loopback", fmt.Sprintf("%d routes via %s", len(routes), joinSorted(uniq(routes))))
	}
	return pass("no route except loopback", "routing tables hold loopback only")
}

func uniq(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// route asks the kernel for a route to ip by connecting a UDP socket, which
// sends no packet. It returns the local address when a route exists.
func route(ip string) (string, error) {
	c, err := net.DialUDP("udp", nil, &net.UDPAddr{IP: net.ParseIP(ip), Port: 9})
	if err != nil {
		return "", err
	}
	defer c.Close()
	return c.LocalAddr().String(), nil
}

func egressTCP(ip string, port int) Result {
	if laddr, err := route(ip); err == nil {
		return fail(noEgressWant, "route to "+ip+" present (from "+laddr+"); not contacted")
	}
	addr := net.JoinHostPort(ip, strconv.Itoa(port))
	c, err := net.DialTimeout("tcp", addr, dialTimeout)
	if err == nil {
		c.Close()
		return fail(noEgressWant, "tcp connect "+addr+" succeeded")
	}
	return pass(noEgressWant, "tcp "+addr+": "+errName(unwrapNet(err)))
}

// egressUDP sends one byte only when send is true and a route exists (the
// gateway listener is the runner's own); otherwise it only checks routing.
func egressUDP(ip string, port int, send bool) Result {
	addr := &net.UDPAddr{IP: net.ParseIP(ip), Port: port}
	c, err := net.DialUDP("udp", nil, addr)
	if err != nil {
		return pass(noEgressWant, "udp "+addr.String()+": "+errName(unwrapNet(err)))
	}
	defer c.Close()
	if !send {
		return fail(noEgressWant, "route to "+ip+" present (from "+c.LocalAddr().String()+"); not contacted")
	}
	c.SetDeadline(time.Now().Add(dialTimeout))
	if _, err := c.Write([]byte("m")); err != nil {
		return fail(noEgressWant, "route present; send: "+errName(unwrapNet(err)))
	}
	return fail(noEgressWant, "sent 1 byte to "+addr.String())
}

func checkGatewayTCP(c Config) Result {
	if c.Gateway == "" || c.GatewayTCP == 0 {
		return fail(noEgressWant, "runner gave no gateway address")
	}
	addr := net.JoinHostPort(c.Gateway, strconv.Itoa(c.GatewayTCP))
	conn, err := net.DialTimeout("tcp", addr, dialTimeout)
	if err != nil {
		return pass(noEgressWant, "tcp "+addr+": "+errName(unwrapNet(err)))
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(dialTimeout))
	n, _ := conn.Write([]byte("m"))
	return fail(noEgressWant, fmt.Sprintf("connected to %s, sent %d byte", addr, n))
}

// checkDNS resolves name only when no nameserver is routable, so a weakened
// network never sends a query to a real resolver.
func checkDNS(name string) Result {
	const want = "name does not resolve; no nameserver reachable"
	if ip, ok := hostsEntry(name); ok {
		return fail(want, name+" in /etc/hosts as "+ip)
	}
	for _, ns := range nameservers() {
		if net.ParseIP(ns).IsLoopback() {
			continue // stays inside the container's own network namespace
		}
		if laddr, err := route(ns); err == nil {
			return fail(want, "route to nameserver "+ns+" present (from "+laddr+"); not queried")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
	defer cancel()
	r := &net.Resolver{PreferGo: true}
	addrs, err := r.LookupHost(ctx, name)
	if err == nil {
		return fail(want, name+" resolved to "+strings.Join(addrs, ","))
	}
	return pass(want, "lookup "+name+": "+short(err.Error(), 120))
}

func nameservers() []string {
	b, err := os.ReadFile("/etc/resolv.conf")
	if err != nil {
		return nil
	}
	var ns []string
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] == "nameserver" && net.ParseIP(f[1]) != nil {
			ns = append(ns, f[1])
		}
	}
	return ns
}

func hostsEntry(name string) (string, bool) {
	b, err := os.ReadFile("/etc/hosts")
	if err != nil {
		return "", false
	}
	for _, l := range strings.Split(string(b), "\n") {
		l, _, _ = strings.Cut(l, "#")
		f := strings.Fields(l)
		for _, h := range f[min(1, len(f)):] {
			if strings.EqualFold(h, name) {
				return f[0], true
			}
		}
	}
	return "", false
}

// unwrapNet digs the errno out of a *net.OpError chain for errName.
func unwrapNet(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		next := u.Unwrap()
		if next == nil {
			return err
		}
		err = next
	}
}
