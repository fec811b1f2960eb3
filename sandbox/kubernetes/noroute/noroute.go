// Package noroute is a CNI plugin for sandbox nodes: it gives a pod no
// interface at all beyond the loopback that the container runtime brings
// up itself, so a pod on such a node reaches nothing, not even another pod
// or the node. The runtime (containerd's CRI) insists on a result with an
// address for eth0, so the result names one that no interface carries: a
// link-local address derived from the container id, never routed.
package noroute

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
)

// Version is the CNI spec version of results.
const Version = "1.0.0"

// Supported are the spec versions the plugin answers.
var Supported = []string{"0.4.0", "1.0.0"}

// netConf is the part of the network configuration the plugin reads.
type netConf struct {
	CNIVersion string `json:"cniVersion"`
	Name       string `json:"name"`
	Type       string `json:"type"`
}

type ipConfig struct {
	Address   string `json:"address"`
	Interface *int   `json:"interface,omitempty"`
}

type iface struct {
	Name    string `json:"name"`
	Sandbox string `json:"sandbox,omitempty"`
}

type result struct {
	CNIVersion string     `json:"cniVersion"`
	Interfaces []iface    `json:"interfaces"`
	IPs        []ipConfig `json:"ips"`
}

// Address is the address reported for a container: 169.254.x.y from its id.
func Address(containerID string) string {
	s := sha256.Sum256([]byte(containerID))
	x, y := s[0], s[1]
	if y == 0 || y == 255 {
		y = 1
	}
	return fmt.Sprintf("169.254.%d.%d/32", x, y)
}

// Run handles one CNI call: command is $CNI_COMMAND, conf the config on stdin.
func Run(command, containerID, netns, ifname string, conf io.Reader, out io.Writer) error {
	if command == "VERSION" {
		return json.NewEncoder(out).Encode(map[string]any{"cniVersion": Version, "supportedVersions": Supported})
	}
	var nc netConf
	if err := json.NewDecoder(io.LimitReader(conf, 1<<20)).Decode(&nc); err != nil {
		return fmt.Errorf("network configuration: %w", err)
	}
	switch command {
	case "ADD":
		if containerID == "" {
			return fmt.Errorf("ADD without CNI_CONTAINERID")
		}
		if ifname == "" {
			ifname = "eth0"
		}
		v := nc.CNIVersion
		if v == "" {
			v = Version
		}
		zero := 0
		return json.NewEncoder(out).Encode(result{CNIVersion: v,
			Interfaces: []iface{{Name: ifname, Sandbox: netns}},
			IPs:        []ipConfig{{Address: Address(containerID), Interface: &zero}}})
	case "DEL", "CHECK", "GC", "STATUS":
		return nil // nothing was made
	}
	return fmt.Errorf("unknown CNI_COMMAND %q", command)
}
