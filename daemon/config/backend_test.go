package config

import (
	"errors"
	"testing"
)

func TestSandboxBackend(t *testing.T) {
	c := Default()
	c.Socket, c.DataDir = "/tmp/x.sock", "/tmp/x"
	doc := "sandbox:\n  backend: kubernetes\n  kubernetes: {kubeconfig: /k/admin.kubeconfig, namespace: ns, runtime_class: gvisor, node_selector: {pool: sandbox}, image: a-k8s:1, pull_policy: Never, max_boxes: 24, episode_boxes: 4, start_timeout: 90s}\n"
	if err := c.Parse([]byte(doc)); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	k := c.Sandbox.Kubernetes
	if c.Sandbox.Backend != "kubernetes" || k.Kubeconfig != "/k/admin.kubeconfig" || k.Namespace != "ns" ||
		k.RuntimeClass != "gvisor" || k.NodeSelector["pool"] != "sandbox" || k.Image != "a-k8s:1" || k.PullPolicy != "Never" ||
		k.MaxBoxes != 24 || k.EpisodeBoxes != 4 || k.StartTimeout != "90s" {
		t.Errorf("parsed %+v", c.Sandbox)
	}
	for _, bad := range []struct{ doc, field string }{
		{"sandbox: {backend: nomad}\n", "sandbox.backend"},
		{"sandbox: {backend: kubernetes, kubernetes: {pull_policy: Sometimes}}\n", "sandbox.kubernetes.pull_policy"},
		{"sandbox: {kubernetes: {max_boxes: -2}}\n", "sandbox.kubernetes.max_boxes"},
		{"sandbox: {kubernetes: {episode_boxes: -1}}\n", "sandbox.kubernetes.episode_boxes"},
		{"sandbox: {kubernetes: {start_timeout: soon}}\n", "sandbox.kubernetes.start_timeout"},
	} {
		c := Default()
		c.Socket, c.DataDir = "/tmp/x.sock", "/tmp/x"
		if err := c.Parse([]byte(bad.doc)); err != nil {
			t.Fatal(err)
		}
		var fe *FieldError
		if err := c.Validate(); !errors.As(err, &fe) || fe.Field != bad.field {
			t.Errorf("%q: %v, want a FieldError on %s", bad.doc, err, bad.field)
		}
	}
}
