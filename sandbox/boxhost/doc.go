// Package boxhost is the host side that the sandbox backends share: file
// operations over the in-box helper's protocol, the exec wrapper's command
// line and timeouts, workspace tars and export rewriting, grading, labels
// and reaping. A backend (sandbox/docker, sandbox/kubernetes) supplies only
// its transport: the Docker engine's API or the Kubernetes API server's
// exec streams.
package boxhost
