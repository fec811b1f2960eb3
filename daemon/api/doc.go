package api

// The /v1 HTTP API of massd. Bodies are JSON unless noted; every error is
// an ErrorBody with a code: not_found 404, invalid 400, conflict 409,
// unavailable 503, unauthorized 401, internal 500. Over the unix socket
// (mode 0600) no authentication is needed; the optional TCP listener
// requires "Authorization: Bearer <token>".
//
//	GET  /v1/healthz                           Health
//	GET  /metrics                              Prometheus text: mass_jobs{state}, mass_api_request_duration_seconds, mass_api_requests_total, mass_build_info
//	GET  /v1/tasks                             []Task
//	POST /v1/tasks                             body: tar (application/x-tar) of spec.yaml + the files it names -> 201 Task; 409 if the id exists
//	POST /v1/tasks/validate                    body: spec YAML/JSON -> ValidateResult (syntax and values only)
//	GET  /v1/tasks/{id}                        Task
//	GET  /v1/jobs?state=&kind=&task=&limit=    []Job, newest first
//	POST /v1/jobs                              JobRequest -> 201 Job (queued)
//	GET  /v1/jobs/{id}                         Job
//	POST /v1/jobs/{id}/cancel                  Job; 409 if already finished
//	POST /v1/jobs/{id}/retry                   Job queued again (failed, cancelled or interrupted jobs); 409 otherwise
//	GET  /v1/jobs/{id}/events?after=N          []Event with seq > N
//	GET  /v1/jobs/{id}/events?after=N&follow=1 JSON lines of StreamItem until the job ends
//	GET  /v1/episodes?job=&task=&status=       []Episode
//	GET  /v1/episodes/{id}                     Episode
//	DELETE /v1/episodes/{id}                   Episode removed (record and directory); 409 while it runs
//	GET  /v1/episodes/{id}/files               []EpisodeFile (the files below that exist)
//	GET  /v1/episodes/{id}/files/{name}        raw file: episode.json, api_requests.jsonl, ledger.jsonl,
//	                                           run_status.json, workspace.manifest.json, workspace.tar,
//	                                           manifests/<agent>.json (regular files only, links never followed)
//	GET  /v1/models                            []Model (configured models; no secrets)
//	POST /v1/models/{name}/test                ModelTest (one small request offering a tool, timed)
//	GET  /v1/report?eval=NAME&gen=G…          cycle/report.Report (win rates, audit, tokens, blind spots; 404 with no evaluation)
