package docker

import (
	"testing"

	"github.com/mass-dev/mass/sandbox/sandboxtest"
)

func TestConformance(t *testing.T) {
	rt := needEngine(t)
	sandboxtest.Run(t, sandboxtest.Harness{Runtime: rt, Image: testImage, Policy: testPolicy()})
}
