package episode

// The helpers of this package's tests that its external tests (the ones
// driving a real massd through daemon/client: chaos, crash, retry policy)
// use. They are external so that the daemon's client, which links the job
// kinds and so this package, is not imported into it.
var (
	NeedEngine = needEngine
	Quiet      = quiet
	TestTask   = testTask
)
