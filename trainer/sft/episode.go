package sft

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// EpisodeMeta is the part of episode.json the builder uses.
type EpisodeMeta struct {
	EpisodeID     string `json:"episode_id"`
	TaskID        string `json:"task_id"`
	Mode          string `json:"mode"`
	Prompt        string `json:"prompt"`
	Workflow      string `json:"workflow"`
	TeacherPrompt string `json:"teacher_prompt"`
}

// Episode is an episode directory read for SFT.
type Episode struct {
	Dir   string
	Meta  EpisodeMeta
	Calls []Call
}

// LoadEpisode reads dir/episode.json and the calls from dir/api_requests.jsonl or, when that
// is absent, from the proxy logs dir/*.jsonl.gz (in name order).
func LoadEpisode(dir string) (*Episode, error) {
	b, err := os.ReadFile(filepath.Join(dir, "episode.json"))
	if err != nil {
		return nil, fmt.Errorf("read episode: %w", err)
	}
	ep := &Episode{Dir: dir}
	if err := json.Unmarshal(b, &ep.Meta); err != nil {
		return nil, fmt.Errorf("decode %s/episode.json: %w", dir, err)
	}
	if ep.Meta.EpisodeID == "" {
		ep.Meta.EpisodeID = filepath.Base(dir)
	}
	if ep.Meta.TaskID == "" {
		return nil, fmt.Errorf("%s/episode.json has no task_id", dir)
	}
	f, err := os.Open(filepath.Join(dir, "api_requests.jsonl"))
	switch {
	case err == nil:
		defer f.Close()
		if ep.Calls, err = ReadCalls(f); err != nil {
			return nil, fmt.Errorf("episode %s: %w", ep.Meta.EpisodeID, err)
		}
		return ep, nil
	case !errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("open api_requests: %w", err)
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "*.jsonl.gz"))
	if len(logs) == 0 {
		return nil, fmt.Errorf("episode %s has neither api_requests.jsonl nor *.jsonl.gz proxy logs", dir)
	}
	sort.Strings(logs)
	for _, p := range logs {
		calls, err := readProxyFile(p)
		if err != nil {
			return nil, err
		}
		for i := range calls {
			calls[i].Seq = len(ep.Calls) + i + 1
		}
		ep.Calls = append(ep.Calls, calls...)
	}
	return ep, nil
}

func readProxyFile(p string) ([]Call, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("open proxy log: %w", err)
	}
	defer f.Close()
	calls, err := ReadProxyLog(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return calls, nil
}
