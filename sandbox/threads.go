package sandbox

import (
	"math"
	"strconv"
)

// ThreadEnvNames are the thread-pool variables the reference's episode
// runner sets for the programs an agent runs (OpenMP, MKL, OpenBLAS,
// numexpr, OpenMM, joblib/loky).
var ThreadEnvNames = []string{"OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
	"NUMEXPR_NUM_THREADS", "OPENMM_CPU_THREADS", "LOKY_MAX_CPU_COUNT"}

// ThreadEnv sets every ThreadEnvNames variable to the box's CPU limit,
// rounded up and at least 1, so the math libraries start as many threads as
// the box may run instead of one per host core. A box without a CPU limit
// (nanoCPUs 0) gets 1.
func ThreadEnv(nanoCPUs int64) map[string]string {
	n := int64(math.Ceil(float64(nanoCPUs) / 1e9))
	if n < 1 {
		n = 1
	}
	v := strconv.FormatInt(n, 10)
	env := make(map[string]string, len(ThreadEnvNames))
	for _, k := range ThreadEnvNames {
		env[k] = v
	}
	return env
}
