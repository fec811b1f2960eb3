package workflow

// Generic is the v0 team for a task whose spec names no workflow file
// (docs/formats.md, "Generic workflow v0"): a planner that fixes the output
// contract, an implementer that produces every required deliverable, and a
// verifier that checks the deliverables against the task and sends a failed
// artifact back to the implementer with a narrowed scope.
func Generic() Workflow {
	return Workflow{Agents: []Agent{
		{AgentID: "planner", Role: "Planner",
			Instruction: "Read the task and every input under /workspace. Write /workspace/plan.md: the deliverables the task requires (exact paths), " +
				"the method for each, and the checks that prove each deliverable correct. Return the plan's path and the list of deliverables."},
		{AgentID: "implementer", Role: "Implementer",
			Instruction: "Follow /workspace/plan.md. Write the code under /workspace and run it to produce every required deliverable at its exact path. " +
				"Return the paths written, the command that reproduces them and its output."},
		{AgentID: "verifier", Role: "Verifier",
			Instruction: "Check every deliverable named in /workspace/plan.md exists, parses and satisfies the task; rerun the reproduction command. " +
				"Write /workspace/verification.md with one line per check (pass/fail and evidence). If a check fails, name the artifact and the narrowed fix " +
				"so the orchestrator can send it back to the implementer."},
	}}
}
