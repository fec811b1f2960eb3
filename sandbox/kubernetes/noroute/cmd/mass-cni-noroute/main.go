// Command mass-cni-noroute is the CNI plugin of mass's sandbox nodes (see
// package noroute): pods get loopback only.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/mass-dev/mass/sandbox/kubernetes/noroute"
)

func main() {
	err := noroute.Run(os.Getenv("CNI_COMMAND"), os.Getenv("CNI_CONTAINERID"), os.Getenv("CNI_NETNS"),
		os.Getenv("CNI_IFNAME"), os.Stdin, os.Stdout)
	if err != nil {
		_ = json.NewEncoder(os.Stdout).Encode(map[string]any{"cniVersion": noroute.Version, "code": 100, "msg": err.Error()})
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
