package api

// GenerationRemoval answers DELETE /v1/generations/{g}: the generation
// removed, the job that had made it ("" when none had) and the models it
// had registered, now unregistered.
type GenerationRemoval struct {
	Generation int      `json:"generation"`
	Dir        string   `json:"dir"`
	Job        string   `json:"job,omitempty"`
	Models     []string `json:"models"`
}
