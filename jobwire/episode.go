package jobwire

// EpisodeKind is the job kind that runs one episode.
const EpisodeKind = "episode"

// EpisodeParams are the parameters of an "episode" job.
type EpisodeParams struct {
	Model    string `json:"model,omitempty"`    // configured model name; default Deps' default
	Workflow string `json:"workflow,omitempty"` // workflow text; empty runs the bare task
	Seed     *int   `json:"seed,omitempty"`     // sampling seed of every model call
	// OnInterrupt is what a massd crash under the episode leads to: "retry"
	// (the default) runs a fresh episode as the job's next attempt, "fail"
	// ends the job failed. Either way the job reports the lost attempt.
	OnInterrupt string `json:"on_interrupt,omitempty"`
}
