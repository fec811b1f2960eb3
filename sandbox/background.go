package sandbox

import "context"

// Backgrounder is a Sandbox that can keep a command running after the call
// that started it (qwen-code's run_shell_command is_background). It is
// optional: a caller type-asserts for it and tells the model the feature is
// unavailable otherwise.
//
// Contract: Background starts req.Argv detached, without a timeout and
// without captured output, and returns its pid inside the sandbox once it
// runs; ErrInvalid for an empty argv, ErrDenied where the runtime cannot
// keep such a process apart from the others (then nothing was started).
// The process and its descendants survive the sweep that ends every other
// process of the agent after each Exec; anything else the agent leaves
// behind is still swept. Stop and Remove kill them with everything else,
// so a background process never outlives its agent's sandbox.
//
// EndBackground kills every background process now (the agent has ended;
// what it left must not write while its last manifest is taken or after).
// Idempotent.
//
// Hold freezes every process of the sandbox until release is called, so
// that the agent's background processes do not run while another agent
// works in the shared workspace (the orchestrator while its sub-agents
// run); it does nothing when no background process runs. Exec and file
// operations must not be called between Hold and release. Safe for
// concurrent use with other sandboxes; Hold calls on one sandbox must not
// overlap.
type Backgrounder interface {
	Background(ctx context.Context, req ExecRequest) (pid int, err error)
	Hold(ctx context.Context) (release func(context.Context), err error)
	EndBackground(ctx context.Context) error
}
