// Package kubernetes implements sandbox.Runtime on a Kubernetes cluster
// through client-go: every box is a pod, commands and the file helper run
// over the API server's exec streams, and nothing on the host ever opens a
// path inside a workspace.
//
// Layout of one episode (every object carries the labels mass.daemon,
// mass.episode, mass.agent and mass.kind, which List, KillEpisode and
// ReapOrphans select by):
//
//   - the workspace: a directory <WorkspaceDir>/<daemon>-<episode> on one
//     node, mounted by subPath of a hostPath volume at /workspace in every
//     pod of the episode. A pod's emptyDir cannot be shared between pods, and
//     a cluster without a ReadWriteMany storage class has no other shared
//     volume, so the episode is pinned to the node its keeper was scheduled
//     on (node affinity on metadata.name): the scheduler spreads episodes
//     over the nodes, never one episode's agents.
//   - pod <name>-ws (label mass.agent=_workspace): the keeper. It runs only
//     the helper's "pause" as root with CAP_CHOWN, CAP_FOWNER,
//     CAP_DAC_READ_SEARCH and CAP_DAC_OVERRIDE (to empty the directory at the
//     end), no token, no network. Inputs are streamed into it as a tar over an
//     exec's stdin (tar -x), "prepare" sets ownership and protection, exports
//     are tar -c over an exec's stdout that the host rewrites (boxhost's
//     export rewriter: capped, manifest with sha256, links never followed), and
//     RemoveWorkspace empties the directory through it before deleting it.
//   - pod <name> per agent: every Policy field that a pod can carry (podSpec):
//     non-root uid/gid, all capabilities dropped, allowPrivilegeEscalation
//     false, seccomp (Localhost profile or RuntimeDefault), read-only root,
//     /tmp an emptyDir of medium Memory with the policy's size, no
//     service-account token, no service links, no host namespaces, CPU,
//     memory and ephemeral-storage limits, runtimeClassName (gVisor by
//     default), restartPolicy Never. The main process is the helper's "pause"
//     (pid 1 of the container's pid namespace, which no signal from inside
//     but SIGTERM reaches); the helper binary is part of the image (no host
//     bind mount at all): scripts/k8s-local.sh load builds it in.
//
// Kubernetes has no per-exec user: an exec runs as the container's user, so
// the agent's commands and the main "pause" share the agent's uid. The agent
// can then end its own box (SIGTERM to pid 1), which only costs it its box;
// it cannot trace pause or the helper (non-dumpable, and the mass seccomp
// profile has no ptrace). A pids cap per pod is the node's podPidsLimit
// (kubelet configuration), which Report names; the API has no field for it.
//
// Exec runs every command under the helper's exec wrapper, which kills the
// whole tree at the timeout and when the command exits; should the command
// kill the wrapper (exit >= 128), "orphans" runs; a host deadline
// (timeout + 5 s) or a cancelled context runs "killall". File operations
// run one helper "op" exec each, as the agent's user.
//
// Pending pods (no capacity yet) and 429 answers are waited for, up to
// Config.StartTimeout, never counted as a failure of the box.
package kubernetes
