// Command mass-k8s-seccomp prints the project's seccomp profile for a
// kubelet's seccomp directory (scripts/k8s-local.sh installs it as
// mass.json, which Config.SeccompLocalhost then names).
package main

import (
	"fmt"
	"os"

	"github.com/mass-dev/mass/sandbox/docker"
)

func main() {
	s, err := docker.MassSeccompJSON()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(s)
}
