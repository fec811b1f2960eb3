// Package loop detects an agent that repeats itself, with qwen-code's
// loop-detection rules and thresholds. Like qwen-code's headless mode, the
// whole run of one agent is one turn: counts never reset between model
// calls. The always-on guards (identical consecutive calls, git-inspection
// stagnation, the adaptive per-turn call cap) always run; the heuristic
// guards (global duplicates, alternating calls, read-file loops, action
// stagnation, chanting, repeated thoughts) run only when Config.Heuristics
// is set, as qwen-code runs them only with skipLoopDetection false (its CLI
// default is true).
package loop

import (
	"fmt"
)

// Defaults, after qwen-code's LoopDetectionService.
const (
	DefaultConsecutiveCalls  = 5   // TOOL_CALL_LOOP_THRESHOLD
	DefaultGlobalDuplicates  = 6   // GLOBAL_DUPLICATE_THRESHOLD
	DefaultCallsPerTurn      = 100 // DEFAULT_MAX_TOOL_CALLS_PER_TURN (soft)
	DefaultHardMultiplier    = 10  // ADAPTIVE_CAP_HARD_MULTIPLIER
	DefaultShellStagnation   = 8   // SHELL_COMMAND_STAGNATION_THRESHOLD
	DefaultAlternatingCycles = 3   // ALTERNATING_PATTERN_CYCLES
	DefaultFileReadThreshold = 8   // FILE_READ_THRESHOLD
	DefaultFileReadWindow    = 15  // FILE_READ_WINDOW
	DefaultStagnation        = 8   // STAGNATION_THRESHOLD
	DefaultChunkSize         = 50  // CONTENT_CHUNK_SIZE
	DefaultChantThreshold    = 10  // CONTENT_LOOP_THRESHOLD
	DefaultContentHistory    = 1000
	DefaultThoughtRepeat     = 3 // THOUGHT_REPEAT_THRESHOLD
)

// Rules name what tripped (qwen-code's LoopType, lower case); they go into
// the ledger's loop_halt record.
const (
	RuleConsecutive     = "consecutive_identical_tool_calls"
	RuleShellStagnation = "shell_command_stagnation"
	RuleTurnCap         = "turn_tool_call_cap"
	RuleGlobalDuplicate = "global_tool_call_duplicate"
	RuleAlternating     = "alternating_tool_call_pattern"
	RuleReadFileLoop    = "read_file_loop"
	RuleStagnation      = "action_stagnation"
	RuleChanting        = "chanting_identical_sentences"
	RuleThoughts        = "repetitive_thoughts"
)

// Config sets the thresholds; zero fields take the defaults. A CallsPerTurn
// given explicitly is a hard cap (qwen-code's model.maxToolCallsPerTurn);
// the default is adaptive: past it a run halts only when some call repeated
// GlobalDuplicates times, and always past CallsPerTurn×HardMultiplier.
type Config struct {
	// Heuristics turns on the opt-in guards (qwen-code skipLoopDetection=false).
	Heuristics        bool
	ConsecutiveCalls  int
	GlobalDuplicates  int
	CallsPerTurn      int
	HardMultiplier    int
	ShellStagnation   int
	AlternatingCycles int
	FileReadThreshold int
	FileReadWindow    int
	Stagnation        int
	ChunkSize         int
	ChantThreshold    int
	ContentHistory    int
	ThoughtRepeat     int

	explicitCap bool
}

// Halt says why an agent was stopped.
type Halt struct {
	Rule   string
	Detail string
}

func (h *Halt) Error() string { return fmt.Sprintf("loop detected (%s): %s", h.Rule, h.Detail) }

// Detector follows one agent run. It is not safe for concurrent use: one
// agent loop owns it.
type Detector struct {
	cfg     Config
	calls   callState
	content contentState
	thought []string
}

// New returns a detector with cfg's thresholds.
func New(cfg Config) *Detector {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	cfg.explicitCap = cfg.CallsPerTurn > 0
	def(&cfg.ConsecutiveCalls, DefaultConsecutiveCalls)
	def(&cfg.GlobalDuplicates, DefaultGlobalDuplicates)
	def(&cfg.CallsPerTurn, DefaultCallsPerTurn)
	def(&cfg.HardMultiplier, DefaultHardMultiplier)
	def(&cfg.ShellStagnation, DefaultShellStagnation)
	def(&cfg.AlternatingCycles, DefaultAlternatingCycles)
	def(&cfg.FileReadThreshold, DefaultFileReadThreshold)
	def(&cfg.FileReadWindow, DefaultFileReadWindow)
	def(&cfg.Stagnation, DefaultStagnation)
	def(&cfg.ChunkSize, DefaultChunkSize)
	def(&cfg.ChantThreshold, DefaultChantThreshold)
	def(&cfg.ContentHistory, DefaultContentHistory)
	def(&cfg.ThoughtRepeat, DefaultThoughtRepeat)
	return &Detector{cfg: cfg, calls: newCallState(), content: newContentState()}
}

// Turn checks one assistant message: its reasoning, its content and its
// tool calls (name and argument text), in the order a stream delivers
// them. It returns a Halt when the agent must stop.
func (d *Detector) Turn(reasoning, content string, calls [][2]string) *Halt {
	if d.cfg.Heuristics {
		if h := d.thoughts(reasoning); h != nil {
			return h
		}
		if h := d.chant(content); h != nil {
			return h
		}
	}
	for _, c := range calls {
		if h := d.call(c[0], c[1]); h != nil {
			return h
		}
	}
	return nil
}
