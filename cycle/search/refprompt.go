package search

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mass-dev/mass/cycle/judge"
	"github.com/mass-dev/mass/cycle/workflow"
)

// OptimizerMarker is the first line of every optimizer system prompt, the
// reference's own (the scripted model keys on it).
const OptimizerMarker = "You are a principal prompt engineer for autonomous coding agents."

// DefaultSubmissionLabel is the reference's neutral provenance label.
const DefaultSubmissionLabel = "the coding agent"

// Cases of the best-design note in baseline mode.
const (
	bestChampionOnlyWin = "champion_only_win"
	bestBothWin         = "both_win_arbitration"
)

// OptimizerInput is everything the optimizer prompt is built from, as
// the reference's _build_single_submission_improvement_prompt takes it.
type OptimizerInput struct {
	Label         string // submission label; empty: DefaultSubmissionLabel
	TaskText      string // the task as the evaluator reads it
	Current       int
	CurrentDesign string
	Evidence      string // the workspace evidence, results appendix included
	Metadata      string // the execution metadata; empty: none supplied
	History       []Comparison
	Diffs         map[string]string // nil unless history_design_diffs
	// Best is shown when non-nil: the previous best design.
	Best          *string
	BestVersion   int
	BestRationale string
	BestCase      string // baseline mode: champion_only_win | both_win_arbitration
	V0            *string
	Baseline      bool   // judged against the no-harness baseline
	Scoreboard    string // baseline mode: the one-line record
	Opts          PromptOptions
}

// saveRules is the reference's literal "Save rules" block, indentation
// and trailing space included.
const saveRules = "\n    Use uv for all Python workflows—run code with uv run, install dependencies with uv add, use uvx for tools. write your history log: write your plan, execution (or tool-execution), reflection during the reasoning logs in a logs.txt file. In logs.txt, Document all created and spawned agents, describe the workflow between agents (e.g., as a structured outline or diagram), track which agents were executed and their roles in the process. \n    "

const sepLine = "--------------------------------"

// BuildOptimizerPrompt builds the optimizer's system and user prompts as
// the reference does, byte for byte given the same inputs.
func BuildOptimizerPrompt(in OptimizerInput) (judge.Prompt, error) {
	if err := in.Opts.Validate(); err != nil {
		return judge.Prompt{}, err
	}
	label := in.Label
	if label == "" {
		label = DefaultSubmissionLabel
	}
	o := in.Opts
	responseRule, contract := outputRules(o.OutputMode)
	sizeSys, sizeUser := sizeRules(o)
	capsSys, capsUser := "", ""
	if o.ForbidFixedAgentLimits {
		capsSys = "Do not introduce arbitrary numerical caps on agent or subagent invocations, " +
			"recall/re-delegation loops, orchestration hops, tool calls, execution turns, " +
			"or wall-clock duration. Terminate through acceptance gates or a genuinely " +
			"unrecoverable documented blocker.\n"
		capsUser = "Do not impose a fixed maximum number of recalls, agent/subagent calls, " +
			"hops, turns, tools, or duration. Use acceptance-based convergence.\n"
	}
	system := OptimizerMarker + "\n" +
		"The following query was executed by " + label + ".\n" +
		"Your task is to improve only the 'multi agent design' block of the query prompt to improve the quality of the query's deliverables (see 'Current multi agent design' below).\n" +
		"Prioritize harnesses that multi-agent systems can do well (or have) and single-agent systems cannot (or does not have), " +
		"such as parallel specialist decomposition, cross-agent critique, agent to agent communication, and iterative reconciliation.\n" +
		"Prioritize two improvements: (1) stronger agent-to-agent communication contracts " +
		"for each subagent 'Output to orchestrator' schema, and " +
		"(2) more orchestrator-subagent hops with explicit iterative recall/re-delegation " +
		"instead of one-pass unidirectional execution.\n" +
		capsSys + sizeSys +
		"You must ground changes in concrete evidence from submission artifacts and comparison history.\n" +
		responseRule

	parts := []string{"1. Query executed by " + label, sepLine, "# Task", in.TaskText,
		fmt.Sprintf("# Current multi agent design (v%d)", in.Current), in.CurrentDesign}
	if in.Best != nil {
		parts = append(parts, fmt.Sprintf("# Previous best multi agent design (v%d)", in.BestVersion), bestNote(in), *in.Best)
	}
	if in.V0 != nil {
		parts = append(parts, "# Original multi agent design (v0 - the initial starting point)",
			"NOTE: this is the original starting design, shown as the ROOT of the version track whose per-step changes appear in the pairwise history below. Use it to follow how the design evolved and to notice drift from the original intent. The current and best designs above supersede it - do not revert to it wholesale.",
			*in.V0)
	}
	metadata := in.Metadata
	if metadata == "" {
		metadata = "- No execution metadata was supplied."
	}
	header, body := historySection(in)
	instructions := improveLead(in) +
		"Preserve the original intent and required deliverables, but address weaknesses revealed by evidence.\n" +
		"Explicitly strengthen 'Output to orchestrator' contracts so downstream agents can consume structured outputs.\n" +
		"Explicitly increase orchestrator-subagent feedback loops: allow orchestrator recall of previously called subagents " +
		"with narrower follow-up scopes and updated acceptance criteria.\n" +
		capsUser + sizeUser +
		"Most importantly, prioritize improvements that create genuine multi-agent advantages over single-agent execution " +
		"(e.g., specialist parallelism, cross-agent validation, agent to agent communication, and conflict resolution loops, etc).\n" +
		"Feedback quality requirements:\n" +
		"- Be specific and evidence-grounded. Reference concrete files/metrics/history signals from the provided evidence.\n" +
		"- Avoid generic claims (e.g., 'better coordination'); explain mechanism and expected effect.\n" +
		"Do not change non-design parts of the query.\n" +
		contract +
		"The `improved_multi_agent_design` should start with '" + workflow.Header + "' and contain the full block."
	parts = append(parts, "# Save rules", saveRules, sepLine,
		"2. Current submission code repo from "+label+" (evidence only)", in.Evidence,
		"2b. Execution metadata", metadata, header, body,
		"3b. Pairwise history delta checklist (recurring issues to fix)", deltaChecklist(in.History),
		"4. Instructions", instructions)
	return judge.Prompt{System: system, User: strings.Join(parts, "\n\n")}, nil
}

func outputRules(mode string) (response, contract string) {
	if mode == OutputDesignText {
		return "Return only the full replacement multi-agent design block as plain text. " +
				"Do not wrap it in JSON, Markdown fences, or explanatory prose.",
			"Output contract: return only the full replacement design block as plain " +
				"text. Its first characters must be the required design marker. Do not " +
				"include JSON metadata, Markdown fences, the task text, or the post-design " +
				"prompt suffix.\n"
	}
	return "Return valid JSON only.", "Output schema:\n{\n" +
		"  \"improved_multi_agent_design\": \"<full replacement text for the design block only>\",\n" +
		"  \"changes_from_previous\": [\"<specific change 1>\", \"...\"],\n" +
		"  \"why_it_should_improve\": [\"<mechanistic rationale 1>\", \"...\"],\n" +
		"  \"evidence_used\": [\"<file/metric/history citation 1>\", \"...\"],\n" +
		"  \"expected_impact\": [\"<expected gain in quality/reliability/reproducibility 1>\", \"...\"],\n" +
		"  \"verification_checks\": [\"<how to validate this change worked in next iteration>\", \"...\"]\n" +
		"}\n"
}

// sizeRules are the compactness sentences, present only with a size flag.
func sizeRules(o PromptOptions) (system, user string) {
	var sys, usr string
	switch {
	case o.TargetDesignChars > 0:
		sys = "target improved_multi_agent_design at no more than " + commas(o.TargetDesignChars) +
			" characters and never exceed " + commas(o.MaxDesignChars) + " characters, and keep each explanatory "
		usr = "Target at most " + commas(o.TargetDesignChars) + " characters and never exceed " +
			commas(o.MaxDesignChars) + " characters. Prefer shared "
	case o.MaxDesignChars > 0:
		sys = "keep improved_multi_agent_design under " + commas(o.MaxDesignChars) + " characters, and keep each explanatory "
		usr = "Keep the replacement design under " + commas(o.MaxDesignChars) + " characters. Prefer shared "
	default:
		return "", ""
	}
	return "Keep the replacement focused and compact: preserve useful existing instructions, " +
			"make evidence-targeted edits, avoid repeating the same protocol in every agent, " +
			sys + "JSON list to at most 8 concise items. This artifact-size constraint is not an " +
			"execution or agent-count constraint.\n",
		usr + "protocols plus compact agent-specific deltas over duplicated schemas.\n"
}

// commas is Python's format(n, ",").
func commas(n int) string {
	s := strconv.Itoa(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func bestNote(in OptimizerInput) string {
	r := ""
	if in.BestRationale != "" {
		r = shorten(strings.TrimFunc(in.BestRationale, pySpace), 2000)
		if last, _ := utf8.DecodeLastRuneInString(r); r != "" && !strings.ContainsRune(".!?\"'", last) {
			r += "."
		}
	}
	b, c, n := in.BestVersion, in.Current, in.Current+1
	tail := fmt.Sprintf(" Refer to BOTH v%d and v%d when writing v%d: keep what made v%d strong, and merge in only the genuinely useful changes attempted since.", b, c, n, b)
	switch {
	case in.Baseline && in.BestCase == bestChampionOnlyWin:
		why := ""
		if r != "" {
			why = fmt.Sprintf(" The judge's stated reasons for the baseline's win over v%d: %s", c, r)
		}
		return fmt.Sprintf("NOTE: this earlier design v%d is shown because it BEAT the no-harness baseline while the current design v%d did not (see the record in section 3).%s", b, c, why) + tail
	case in.Baseline && in.BestCase == bestBothWin:
		why := ""
		if r != "" {
			why = " The judge's stated reasons: " + r
		}
		return fmt.Sprintf("NOTE: both this earlier design v%d and the current design v%d beat the no-harness baseline; in a direct comparison the judge found v%d's deliverables better.%s", b, c, b, why) + tail
	}
	why := ""
	if r != "" {
		why = " The judge's stated reasons for that verdict: " + r
	}
	return fmt.Sprintf("NOTE: this earlier design v%d is shown because the in-loop pairwise judge determined it produced BETTER deliverables than the current design v%d (v%d > v%d in the comparison history).%s", b, c, b, c, why) + tail
}

func improveLead(in OptimizerInput) string {
	v, n := in.Current, in.Current+1
	switch {
	case in.Best != nil && in.Baseline:
		return fmt.Sprintf("Improve the multi-agent design to v%d by combining the strengths of the previous best design v%d with the current design v%d, with the explicit objective of producing deliverables that decisively OUTPERFORM the no-harness baseline (see section 3), not merely improving on v%d.\n", n, in.BestVersion, v, v)
	case in.Best != nil:
		return fmt.Sprintf("Improve the multi-agent design to v%d by combining the strengths of the previous best design v%d with the current design v%d, to enhance the quality of the query's deliverables by creating genuine multi-agent advantages over single-agent execution.\n", n, in.BestVersion, v)
	case in.Baseline:
		return fmt.Sprintf("Improve the multi-agent design from v%d to v%d to enhance the quality of the query's deliverables by creating genuine multi-agent advantages over single-agent execution, with the explicit objective of producing deliverables that decisively OUTPERFORM the no-harness baseline (see section 3), not merely improving on v%d.\n", v, n, v)
	}
	return fmt.Sprintf("Improve the multi-agent design from v%d to v%d to enhance the quality of the query's deliverables by creating genuine multi-agent advantages over single-agent execution.\n", v, n)
}

func historySection(in OptimizerInput) (header, body string) {
	body = historySummary(in.History, in.Diffs)
	if !in.Baseline {
		return "3. Pairwise history summary", body
	}
	var framing []string
	if in.Scoreboard != "" {
		framing = append(framing, in.Scoreboard)
		if strings.Contains(in.Scoreboard, "★") {
			framing = append(framing, "★ = best design so far: among the versions that beat the baseline, direct pairwise arbitration judged this one's deliverables best.")
		}
	}
	framing = append(framing, "Each entry below compares that version's outputs against the FIXED no-harness baseline - the same task executed by a bare single agent with no multi-agent design. The diff attached to an entry shows what changed in the design before that verdict. Each verdict is a single judgment; treat trends across rounds as more informative than any single win/loss flip.")
	return "3. Pairwise history vs the no-harness baseline", strings.Join(framing, "\n") + "\n\n" + body
}
