package jobwire

// TrainKind is the job kind that runs mass-train (its params are
// trainer/trainjob.Params).
const TrainKind = "train"
