// Package docker implements sandbox.Runtime on the Docker Engine API
// (github.com/docker/docker/client with API version negotiation, so an
// engine as old as 20.10 / API 1.41 works).
//
// Layout of one episode:
//
//   - volume mass-ws-<episode>: the workspace, mounted at /workspace in every
//     container of the episode. With a disk cap it is a tmpfs volume of that
//     size (local driver, type=tmpfs, nosuid,nodev): the kernel enforces the
//     cap with ENOSPC. Engines before API 1.45 have no volume subpaths and the
//     local driver has no quota on this host's filesystems, so tmpfs is the
//     cap the engine can enforce. Its pages count toward host memory and
//     toward the memory cgroup of the agent that wrote them: an agent cannot
//     write more into the workspace than its memory limit minus what its
//     processes use (past that it is OOM-killed, as with any tmpfs).
//     Config.DiskMode DiskMonitor instead keeps it on disk and measures it
//     from the keeper every few seconds, killing the agents of an episode
//     over its cap.
//   - container mass-ws-<episode> (label mass.agent=_workspace): the keeper.
//     The local driver unmounts, and so empties, a tmpfs volume when no
//     container uses it, so the keeper holds it for the episode's lifetime.
//     It runs only the helper ("pause") as root with CAP_CHOWN, CAP_FOWNER and
//     CAP_DAC_READ_SEARCH, no network, read-only root. Inputs are copied into it through the engine
//     (CopyToContainer), it runs "prepare" to set ownership, and exports go
//     through it (CopyFromContainer). KillEpisode leaves it so the workspace
//     can still be exported; RemoveWorkspace removes it with the volume.
//   - container mass-<episode>-<agent>: one per agent, every Policy field
//     applied (hostConfig), main process the helper's "pause" under the
//     engine's init. The only host bind mount is the helper binary, read-only.
//
// Protected paths: a volume cannot be mounted twice with one subtree read-only
// on this API version, so protection uses ownership. Agents run as a non-root
// uid without capabilities. "prepare" makes every protected path root-owned
// and not writable by others, and makes each of its ancestors up to
// /workspace a root-owned sticky directory (mode 1777): agents can still add
// and remove their own files there, but cannot write, rename, replace or
// delete the protected entries. A policy that adds CAP_DAC_OVERRIDE or
// CAP_FOWNER, or runs agents as root, defeats this; Policy.Weaknesses says so.
//
// Exec runs every command under the helper's exec wrapper, a child subreaper
// that kills the command's whole process tree at the timeout and when the
// command exits. Should a command kill the wrapper, the host's own deadline
// (timeout + 5 s) or a cancelled context runs the helper's "killall", which
// kills every process of the agent but the container's init and main process.
// Output beyond the cap is drained and dropped, never buffered.
//
// File operations go through one long-lived "serve" exec of the helper per
// box, as the agent's user, with length-prefixed JSON frames (fileOps). The
// agent can kill or stop that helper: a dead session is replaced and only
// ops that are safe to repeat (or certainly unsent) are retried; a hung one
// hits the per-op timeout, which runs "killall" and drops the session.
package docker
