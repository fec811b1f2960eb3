//go:build cuda

package depcheck

import _ "gorgonia.org/cu"
