// Package api holds massd's wire types (the JSON documents of the /v1 HTTP
// API) and the error classes shared by the daemon and its typed client.
package api

import (
	"encoding/json"
	"time"

	"github.com/mass-dev/mass/jobkind"
	"github.com/mass-dev/mass/taskspec"
)

// Job states.
const (
	StateQueued      = "queued"
	StateRunning     = "running"
	StateSucceeded   = "succeeded"
	StateFailed      = "failed"
	StateCancelled   = "cancelled"
	StateInterrupted = "interrupted"
)

// States lists every job state in lifecycle order.
var States = []string{StateQueued, StateRunning, StateSucceeded, StateFailed, StateCancelled, StateInterrupted}

// Terminal reports whether a job in state s will not change state again
// without an operator or a daemon restart.
func Terminal(s string) bool {
	switch s {
	case StateSucceeded, StateFailed, StateCancelled, StateInterrupted:
		return true
	}
	return false
}

// Health is GET /v1/healthz.
type Health struct {
	Status   string         `json:"status"` // "ok"
	Version  string         `json:"version"`
	DaemonID string         `json:"daemon_id"`
	Started  time.Time      `json:"started"`
	DataDir  string         `json:"data_dir"`
	Kinds    []string       `json:"kinds"`
	Jobs     map[string]int `json:"jobs"` // count by state
	// Disk is the data dir's free space; Status is "low_disk" while it is
	// below the threshold (new jobs and task uploads are refused, 503).
	Disk *DiskHealth `json:"disk,omitempty"`
	// Recovery is what start-up recovery is doing; Status is "recovering"
	// while it runs (submissions are queued, no job starts).
	Recovery *Recovery `json:"recovery,omitempty"`
	// Engine is the sandbox engine (Docker) as healthz sees it: whether a
	// ping was answered within its deadline, and how fast.
	Engine *EngineHealth `json:"engine,omitempty"`
}

// EngineHealth is the Docker engine in healthz.
type EngineHealth struct {
	Reachable bool   `json:"reachable"`
	LatencyMS int64  `json:"latency_ms"`
	Error     string `json:"error,omitempty"`
}

// Recovery is start-up recovery in healthz: what a crashed massd left is
// being reaped in the background.
type Recovery struct {
	Stage string `json:"stage"` // reaping sandboxes | closing episodes
	// Episodes are the interrupted episodes to close.
	Episodes int       `json:"episodes"`
	Since    time.Time `json:"since"`
}

// DiskHealth is the data dir's file system in healthz.
type DiskHealth struct {
	FreeBytes    int64 `json:"free_bytes"`
	MinFreeBytes int64 `json:"min_free_bytes"`
	Low          bool  `json:"low"`
}

// Progress is a job's live stage and counters; job kinds report it.
type Progress = jobkind.Progress

// Task is a stored task.
type Task struct {
	ID      string        `json:"id"`
	Created time.Time     `json:"created"`
	Dir     string        `json:"dir"`
	Spec    taskspec.Spec `json:"spec"`
}

// JobRequest is POST /v1/jobs.
type JobRequest struct {
	Kind   string          `json:"kind"`
	TaskID string          `json:"task_id,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
}

// Job is one job's current state.
type Job struct {
	ID        string          `json:"id"`
	Kind      string          `json:"kind"`
	TaskID    string          `json:"task_id,omitempty"`
	State     string          `json:"state"`
	Attempt   int             `json:"attempt"`
	Params    json.RawMessage `json:"params,omitempty"`
	Progress  *Progress       `json:"progress,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     string          `json:"error,omitempty"`
	Created   time.Time       `json:"created"`
	Started   *time.Time      `json:"started,omitempty"`
	Finished  *time.Time      `json:"finished,omitempty"`
	LastSeq   int64           `json:"last_seq"`
	WorkDir   string          `json:"work_dir,omitempty"`
	CancelAsk bool            `json:"cancel_requested,omitempty"`
}

// Event is one durable job event. Seq is 1-based and gap-free per job.
type Event struct {
	JobID   string         `json:"job_id"`
	Seq     int64          `json:"seq"`
	Time    time.Time      `json:"ts"`
	Type    string         `json:"type"`
	Message string         `json:"msg,omitempty"`
	Fields  map[string]any `json:"fields,omitempty"`
}

// StreamItem is one line of GET /v1/jobs/{id}/events?follow=1 (JSON lines):
// either an event or a fresh snapshot of the job (state or progress changed).
type StreamItem struct {
	Event *Event `json:"event,omitempty"`
	Job   *Job   `json:"job,omitempty"`
}

// Episode is one row of the episodes table.
type Episode struct {
	ID      string          `json:"id"`
	JobID   string          `json:"job_id"`
	TaskID  string          `json:"task_id"`
	Status  string          `json:"status"`
	Dir     string          `json:"dir"`
	Summary json.RawMessage `json:"summary,omitempty"`
	Created time.Time       `json:"created"`
	Updated time.Time       `json:"updated"`
}

// EpisodeFile is one entry of GET /v1/episodes/{id}/files: a file the
// API serves from the episode's directory.
type EpisodeFile struct {
	Name     string    `json:"name"` // e.g. ledger.jsonl, manifests/orchestrator.json
	Size     int64     `json:"size"`
	Modified time.Time `json:"modified"`
}

// Model is one entry of GET /v1/models: a model massd can call. Secrets
// (API keys and where they come from) are never included.
type Model struct {
	Name    string `json:"name"`
	Model   string `json:"model,omitempty"`    // the model id the endpoint serves
	BaseURL string `json:"base_url,omitempty"` // scheme, host and path, without credentials
	Default bool   `json:"default,omitempty"`  // used when a job names no model
	DryRun  bool   `json:"dry_run,omitempty"`  // the built-in scripted model
	Error   string `json:"error,omitempty"`    // why a configured model cannot be used

	// Provider is the wire protocol of a configured entry (openai-chat,
	// openai-responses, anthropic).
	Provider string `json:"provider,omitempty"`

	// A model a generation registered (docs/formats.md "Generations") also
	// carries its lineage: generation G trained from Parent.
	G         int    `json:"g,omitempty"`
	Parent    string `json:"parent,omitempty"`
	Weights   string `json:"weights,omitempty"`
	Tokenizer string `json:"tokenizer,omitempty"`
	Adapter   string `json:"adapter,omitempty"`
	JobID     string `json:"job_id,omitempty"` // the generation job that registered it
	// Serves is the weights calls to Name reach: a folder (a base or a
	// merged generation), or "<folder> + adapter <path>" for runtime LoRA.
	Serves string `json:"serves,omitempty"`
}

// ModelTest is POST /v1/models/{name}/test: one small chat completion
// offering one tool, timed.
type ModelTest struct {
	Name      string  `json:"name"`
	Model     string  `json:"model"`              // model id the endpoint was asked for
	OK        bool    `json:"ok"`                 // the endpoint answered
	ToolCalls bool    `json:"tool_calls"`         // it called the offered tool with valid JSON arguments
	LatencyMS float64 `json:"latency_ms"`         // time to the answer, retries included
	Tokens    int     `json:"tokens,omitempty"`   // total tokens of the exchange
	Reply     string  `json:"reply,omitempty"`    // start of the answer's text
	Error     string  `json:"error,omitempty"`    // why it did not answer
	Attempts  int     `json:"attempts,omitempty"` // HTTP attempts
}

// ValidateResult is POST /v1/tasks/validate.
type ValidateResult struct {
	OK     bool     `json:"ok"`
	Errors []string `json:"errors,omitempty"`
}

// ErrorBody is the JSON body of every non-2xx response.
type ErrorBody struct {
	Error string `json:"error"`
	Code  string `json:"code"` // a class's code (errors.go: not_found, invalid, too_large, …), internal or method_not_allowed
}

// Search is one workflow search as GET /v1/searches lists it and GET
// /v1/searches/{task}/{id} shows it: the files of search/<task>/<id>/
// (docs/formats.md "Workflow search") as massd found them. The JSON
// documents are passed through as written; a file not written yet is
// absent.
type Search struct {
	Task     string          `json:"task"`
	ID       string          `json:"id"`
	Dir      string          `json:"dir,omitempty"` // where massd keeps it
	Modified time.Time       `json:"modified"`
	Retained json.RawMessage `json:"retained,omitempty"`
	// Versions are the design versions k that have a file, ascending.
	Versions []int `json:"versions,omitempty"`
	// Comparisons and Champions are the lines of the two record files.
	Comparisons []json.RawMessage `json:"comparisons,omitempty"`
	Champions   []json.RawMessage `json:"champions,omitempty"`
}

// WorkspaceRemoval answers DELETE /v1/episodes/{id}/workspace: the episode
// (its record kept) and whether an export was there to remove.
type WorkspaceRemoval struct {
	Episode Episode `json:"episode"`
	Removed bool    `json:"removed"`
}
