package sft

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/mass-dev/mass/episodefmt"
)

// EpisodeMeta is episode.json as the episode runner writes it
// (episodefmt.Info); the builder uses the ids, mode and prompts.
type EpisodeMeta = episodefmt.Info

// Episode is an episode directory read for SFT.
type Episode struct {
	Dir   string
	Meta  EpisodeMeta
	Calls []Call
}

// LoadEpisode reads dir/episode.json and the calls from dir/api_requests.jsonl or, when that
// is absent, from the proxy logs dir/*.jsonl.gz (in name order).
func LoadEpisode(dir string) (*Episode, error) {
	meta, err := episodefmt.ReadInfo(dir)
	if err != nil {
		return nil, err
	}
	ep := &Episode{Dir: dir, Meta: meta}
	if ep.Meta.EpisodeID == "" {
		ep.Meta.EpisodeID = filepath.Base(dir)
	}
	if ep.Meta.TaskID == "" {
		return nil, fmt.Errorf("%s/%s has no task_id", dir, episodefmt.EpisodeFile)
	}
	f, err := os.Open(filepath.Join(dir, episodefmt.RequestsFile))
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
